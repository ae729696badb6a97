"""UrlProbe: a goto address is opened once in a guarded background tab, read, closed, and judged by how it loaded."""

from __future__ import annotations

import asyncio

import pytest

from branchwise.browser import BrowserDisconnected
from branchwise.link import ExtensionError
from branchwise.protocol import FrameTree, NavigationInfo, Observation, TabInfo
from branchwise.search.urlcheck import UrlProbe, load_failure


class FakeBrowser:
    """Just the tab calls UrlProbe makes; `pages` maps an address to how it loads (or an error to raise)."""

    def __init__(self, pages: dict[str, NavigationInfo | Exception]) -> None:
        self.pages = pages
        self.opened: list[tuple[str, bool, bool]] = []
        self.closed: list[int] = []
        self.urls: dict[int, str] = {}

    async def open_tab(self, url: str, active: bool = True, guarded: bool = False) -> TabInfo:
        self.opened.append((url, active, guarded))
        await asyncio.sleep(0.01)  # let concurrent checks of the same address overlap
        outcome = self.pages[url]
        if isinstance(outcome, Exception):
            raise outcome
        tab_id = 100 + len(self.opened)
        self.urls[tab_id] = url
        return TabInfo(tab_id=tab_id, index=1, url=url)

    async def observe(self, tab_id: int) -> Observation:
        navigation = self.pages[self.urls[tab_id]]
        assert isinstance(navigation, NavigationInfo)
        return Observation(tab_id=tab_id, url=self.urls[tab_id], navigation=navigation, frames=[FrameTree(
            frame_id="F", url=self.urls[tab_id], nodes=[])])

    async def close_tab_quietly(self, tab_id: int) -> None:
        self.closed.append(tab_id)


OK = NavigationInfo(http_status=200)


@pytest.mark.parametrize(("navigation", "reason"), [
    (OK, None),
    (NavigationInfo(), None),
    (NavigationInfo(http_status=302), None),
    (NavigationInfo(http_status=404), "http://x.test/a answers HTTP 404"),
    (NavigationInfo(http_status=503), "http://x.test/a answers HTTP 503"),
    (NavigationInfo(error_page=True), "http://x.test/a does not load (the browser shows its error page: no connection "
                                      "or no such host)"),
])
def test_load_failure(navigation: NavigationInfo, reason: str | None) -> None:
    assert load_failure("http://x.test/a", navigation) == reason


def probe(pages: dict[str, NavigationInfo | Exception]) -> tuple[UrlProbe, FakeBrowser]:
    browser = FakeBrowser(pages)
    return UrlProbe(browser), browser  # type: ignore[arg-type]


def test_the_address_is_opened_in_a_guarded_background_tab_and_closed() -> None:
    checker, browser = probe({"http://x.test/gone": NavigationInfo(http_status=410)})
    assert asyncio.run(checker.check("http://x.test/gone")) == "http://x.test/gone answers HTTP 410"
    assert browser.opened == [("http://x.test/gone", False, True)]
    assert browser.closed == [101]


def test_each_address_is_checked_once_even_when_asked_concurrently() -> None:
    checker, browser = probe({"http://x.test/a": OK, "http://x.test/b": NavigationInfo(http_status=500)})

    async def ask() -> list[str | None]:
        return list(await asyncio.gather(*(checker.check(u) for u in ["http://x.test/a", "http://x.test/b"] * 3)))

    assert asyncio.run(ask()) == [None, "http://x.test/b answers HTTP 500"] * 3
    assert [url for url, _, _ in browser.opened] == ["http://x.test/a", "http://x.test/b"]
    assert checker.probes == 2


def test_an_address_the_extension_refuses_is_a_reason() -> None:
    checker, _ = probe({"http://x.test/a": ExtensionError("invalid_message", "Branchwise opens only http(s) pages")})
    reason = asyncio.run(checker.check("http://x.test/a"))
    assert reason is not None and reason.startswith("http://x.test/a cannot be opened: ")
    assert "Branchwise opens only http(s) pages" in reason


def test_a_lost_extension_is_not_blamed_on_the_address() -> None:
    checker, browser = probe({"http://x.test/a": BrowserDisconnected("the extension disconnected during open_tab")})
    assert asyncio.run(checker.check("http://x.test/a")) is None
    assert browser.closed == []
