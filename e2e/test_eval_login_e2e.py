"""Tasks that require a login start signed in, as in WebArena: the harness signs each site's demo user in through
the extension before the run. Checked on all three sandbox sites by reading a members-only page afterwards."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from branchwise.harness.logins import LOGINS, LoginFailed, log_in
from branchwise.harness.reader import BrowserPageReader
from branchwise.harness.sandboxes import fresh_sites

from harness import Stack

pytestmark = pytest.mark.e2e

# A page only a signed-in member sees, and what it shows then (anyone else is sent to the sign-in form).
MEMBERS_ONLY = {"shopping": ("/account", "Sign out"), "reddit": ("/subscriptions", "Log out"),
                "gitlab": ("/byteblaze/trail-map/-/issues/new", "Create issue")}
BODY = "document.body.innerText"


def test_the_demo_user_is_signed_in_on_every_site(stack: Stack, tmp_path: Path) -> None:
    browser = stack.session.browser

    async def scenario() -> dict[str, tuple[str, str]]:
        seen: dict[str, tuple[str, str]] = {}
        async with fresh_sites(list(LOGINS), tmp_path) as running:
            for site in running:
                path, _ = MEMBERS_ONLY[site.name]
                reader = BrowserPageReader(browser, site.base_url + path)
                before = await reader.read(None, BODY, [])
                await log_in(browser, site.base_url, LOGINS[site.name])
                seen[site.name] = (before, await reader.read(None, BODY, []))
        return seen

    seen = stack.call(scenario(), timeout=120)
    for name, (before, after) in seen.items():
        marker = MEMBERS_ONLY[name][1]
        assert marker not in before, f"{name}: members-only page shown before signing in"
        assert marker in after, f"{name}: not signed in: {after[:300]!r}"


def test_a_wrong_password_is_a_setup_failure_with_the_reason(stack: Stack, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with fresh_sites(["reddit"], tmp_path) as [forum]:
            await log_in(stack.session.browser, forum.base_url,
                         dataclasses.replace(LOGINS["reddit"], password="wrong"))

    with pytest.raises(LoginFailed, match=r"could not sign in at .*\(still on the form\)"):
        stack.call(scenario(), timeout=60)
