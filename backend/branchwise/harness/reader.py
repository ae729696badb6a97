"""program_html's page reader through the extension: each read opens its URL (or the page the run ended on) in a
guarded background tab, where mutating requests are blocked, runs the prep actions and the locator there, and closes
the tab. The run's own tabs are never touched."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..browser import BROWSER_FAILURES, Browser

log = logging.getLogger(__name__)


class BrowserPageReader:
    def __init__(self, browser: Browser, final_url: str) -> None:
        self.browser = browser
        self.final_url = final_url

    async def read(self, url: str | None, locator: str, prep_actions: Sequence[str]) -> str:
        tab = await self.browser.open_tab(url or self.final_url, active=False, guarded=True)
        try:
            value = await self.browser.read_page(tab.tab_id, locator, prep_actions)
        except BROWSER_FAILURES as exc:
            log.info("program_html: reading %s failed: %s", url or self.final_url, exc)
            return ""
        finally:
            await self.browser.close_tab_quietly(tab.tab_id)
        if not value.ok:
            # WebArena: "the page is wrong, return empty".
            log.info("program_html: %r on %s threw: %s", locator, url or self.final_url, value.error)
            return ""
        return value.value
