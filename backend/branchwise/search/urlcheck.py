"""Does a `goto` address answer? WebOperator's dynamic action space checks it before the agent spends a branch on it.

The address is opened in a guarded background tab (mutating requests blocked, the user's tab untouched) and the
answer read from the observation: Chromium's own error page (no connection, unknown host) or an HTTP status of 400 or
more makes it a reason the model is told. Each address is checked once per run; generators asking for the same one
concurrently share the check.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from ..browser import Browser, BrowserDisconnected
from ..link import ExtensionError, LinkClosed
from ..protocol import NavigationInfo
from ..safety.sites import SiteRules

log = logging.getLogger(__name__)


class UrlCheck(Protocol):
    async def check(self, url: str) -> str | None:
        """None when the address loads a page, else why not, phrased for the model."""
        ...


def load_failure(url: str, navigation: NavigationInfo) -> str | None:
    if navigation.error_page:
        return f"{url} does not load (the browser shows its error page: no connection or no such host)"
    if navigation.http_status is not None and navigation.http_status >= 400:
        return f"{url} answers HTTP {navigation.http_status}"
    return None


class UrlProbe:
    def __init__(self, browser: Browser, sites: SiteRules | None = None) -> None:
        self.browser = browser
        # The user's site lists: an address that redirects onto a refused site is not worth a branch either.
        self.sites = sites or SiteRules()
        self.probes = 0
        self._checks: dict[str, asyncio.Task[str | None]] = {}

    async def check(self, url: str) -> str | None:
        task = self._checks.get(url)
        if task is None:
            task = self._checks[url] = asyncio.create_task(self._probe(url))
        return await asyncio.shield(task)

    async def _probe(self, url: str) -> str | None:
        self.probes += 1
        try:
            tab = await self.browser.open_tab(url, active=False, guarded=True)
        except ExtensionError as exc:
            return f"{url} cannot be opened: {exc}"
        except (BrowserDisconnected, LinkClosed) as exc:
            # Not the address's fault: let the action through; executing it will meet the same trouble and say so.
            log.info("could not check %s: %s", url, exc)
            return None
        try:
            observation = await self.browser.observe(tab.tab_id)
        except ExtensionError as exc:
            if exc.code == "site_not_allowed":  # it redirected onto a site the extension's lists refuse
                return f"{url} leads to a site Branchwise does not work on: {exc.message}"
            log.info("could not read %s in its check tab: %s", url, exc)
            return None
        except (BrowserDisconnected, LinkClosed) as exc:
            log.info("could not read %s in its check tab: %s", url, exc)
            return None
        finally:
            await self.browser.close_tab_quietly(tab.tab_id)
        refusal = self.sites.refusal(observation.url)
        if refusal is not None:
            return f"{url} leads to a site Branchwise does not work on: {refusal}"
        reason = load_failure(url, observation.navigation)
        log.info("goto %s: %s", url, reason or "loads")
        return reason
