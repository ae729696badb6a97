"""Signing the demo user in before a task that requires it, as WebArena starts such tasks logged in: through the
extension, with trusted input, in a tab of the run's browser that is closed again (the cookie stays)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..actions import Click, Type
from ..agent.env import BrowserEnv
from ..browser import Browser
from ..observation import PageView
from ..sandbox import DEMO_USER as SHOP_USER
from ..sandbox.forum import DEMO_USER as FORUM_USER
from ..sandbox.tracker import DEMO_USER as TRACKER_USER

log = logging.getLogger(__name__)


class LoginFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class LoginForm:
    """Where a site's sign-in form is and how its fields are labelled, and whose credentials to use."""

    path: str
    user_label: str
    password_label: str
    submit_label: str
    user: str
    password: str


LOGINS: dict[str, LoginForm] = {
    "shopping": LoginForm("/login", "Email address", "Password", "Sign in", SHOP_USER.email, SHOP_USER.password),
    "reddit": LoginForm("/login", "Username", "Password", "Log in", FORUM_USER.username, FORUM_USER.password),
    "gitlab": LoginForm("/users/sign_in", "Username or email", "Password", "Sign in", TRACKER_USER.username,
                        TRACKER_USER.password),
}


def element_named(page: PageView | None, roles: tuple[str, ...], name: str) -> int | None:
    if page is None:
        return None
    return next((i for i, e in page.elements.items() if e.role in roles and e.name == name), None)


async def log_in(browser: Browser, base_url: str, form: LoginForm) -> None:
    """Fill and submit the site's sign-in form; raises LoginFailed when the form is not there or stays there."""
    tab = await browser.open_tab(base_url + form.path, active=False)
    try:
        env = BrowserEnv(browser, tab.tab_id)
        page = (await env.observe()).page
        fields = (element_named(page, ("textbox", "searchbox"), form.user_label),
                  element_named(page, ("textbox",), form.password_label),
                  element_named(page, ("button",), form.submit_label))
        if None in fields:
            raise LoginFailed(f"no sign-in form at {base_url + form.path} (looked for {form.user_label!r}, "
                              f"{form.password_label!r} and the button {form.submit_label!r})")
        user_id, password_id, submit_id = fields
        assert user_id is not None and password_id is not None and submit_id is not None
        for action in (Type(user_id, form.user, False), Type(password_id, form.password, False), Click(submit_id)):
            outcome = await env.execute(action)
            if not outcome.ok:
                raise LoginFailed(f"signing in at {base_url + form.path} failed: {outcome.error}")
        after = await env.observe()
        if element_named(after.page, ("textbox",), form.password_label) is not None:
            raise LoginFailed(f"{form.user} could not sign in at {base_url + form.path} (still on the form)")
        log.info("signed in as %s at %s", form.user, base_url)
    finally:
        await browser.close_tab_quietly(tab.tab_id)
