"""The browser layer's side of reusing an unchanged page's capture: what it asks the extension to reuse, the kept
frames it puts back, and what it does when the extension's answer does not fit (on a saved capture)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TypeVar

from branchwise.agent.env import BrowserEnv
from branchwise.browser import Browser, BrowserConfig
from branchwise.config import ServerConfig
from branchwise.link import ExtensionHub
from branchwise.protocol import Done, Envelope, Observation, Observe

R = TypeVar("R", bound=Envelope)
CAPTURE = Observation.model_validate_json(
    (Path(__file__).parent / "fixtures" / "axtree" / "shop_home.json").read_text())


class ScriptedBrowser(Browser):
    """Answers `observe` from a list of replies and records what it was asked."""

    def __init__(self, replies: list[Observation], config: BrowserConfig | None = None) -> None:
        super().__init__(ExtensionHub(ServerConfig()), config)
        self.replies = replies
        self.asked: list[Observe] = []

    async def _request(self, message: Envelope, reply: type[R], timeout: float, *, retry: bool) -> R:
        answer: Envelope = Done()
        if isinstance(message, Observe):
            self.asked.append(message)
            # Each answer names the request it answers, as the extension's do.
            answer = self.replies.pop(0).model_copy(update={"tab_id": message.tab_id, "reply_to": message.id})
        assert isinstance(answer, reply)
        return answer


def captured(capture_id: str) -> Observation:
    return CAPTURE.model_copy(update={"capture_id": capture_id, "reused": False}, deep=True)  # as parsed anew


def reused(capture_id: str) -> Observation:
    return CAPTURE.model_copy(update={"capture_id": capture_id, "reused": True, "frames": []})


def test_an_unchanged_page_gets_the_kept_frames_and_is_not_processed_again() -> None:
    browser = ScriptedBrowser([captured("c1"), reused("c1"), reused("c1")])
    env = BrowserEnv(browser, 7)
    first = asyncio.run(env.observe())
    second = asyncio.run(env.observe())
    assert [m.reuse for m in browser.asked] == ["", "c1"]
    assert second.page is first.page, "the same capture was processed twice"
    again = asyncio.run(browser.observe(7))
    assert again.reused and again.frames == CAPTURE.frames


def test_a_changed_page_is_captured_and_kept_afresh() -> None:
    browser = ScriptedBrowser([captured("c1"), captured("c2"), reused("c2")])
    env = BrowserEnv(browser, 7)
    first = asyncio.run(env.observe())
    second = asyncio.run(env.observe())
    assert second.page is not first.page and second.text == first.text
    asyncio.run(env.observe())
    assert [m.reuse for m in browser.asked] == ["", "c1", "c2"]


def test_a_capture_taken_while_the_page_changed_is_not_offered_for_reuse() -> None:
    browser = ScriptedBrowser([captured(""), captured("c2")])
    asyncio.run(browser.observe(7))
    asyncio.run(browser.observe(7))
    assert [m.reuse for m in browser.asked] == ["", ""]


def test_a_reuse_of_a_capture_not_kept_is_observed_afresh() -> None:
    browser = ScriptedBrowser([captured("c1"), reused("other"), captured("c3")])
    asyncio.run(browser.observe(7))
    observation = asyncio.run(browser.observe(7))
    assert not observation.reused and observation.frames == CAPTURE.frames
    assert [m.reuse for m in browser.asked] == ["", "c1", ""]


def test_captures_are_kept_for_few_tabs_and_dropped_with_their_tab() -> None:
    browser = ScriptedBrowser([captured("a"), captured("b"), captured("a2"), captured("c")],
                              BrowserConfig(kept_captures=1))
    asyncio.run(browser.observe(1))
    asyncio.run(browser.observe(2))
    asyncio.run(browser.observe(1))
    asyncio.run(browser.close_tab(1))
    asyncio.run(browser.observe(1))
    assert [(m.tab_id, m.reuse) for m in browser.asked] == [(1, ""), (2, ""), (1, ""), (1, "")]


def test_reuse_can_be_turned_off() -> None:
    browser = ScriptedBrowser([captured("c1"), captured("c2")], BrowserConfig(reuse_captures=False))
    asyncio.run(browser.observe(7))
    asyncio.run(browser.observe(7))
    assert [m.reuse for m in browser.asked] == ["", ""]
