"""Observing a page that has not changed reuses the last capture (extension/lib/unchanged.js): nothing is captured or
sent again, and the model reads the same text. Any change the accessibility tree could show — DOM, a field's value
set by a script with no event, a checkbox, an open shadow root, a same-origin frame, scrolling, a style — is captured
afresh. The changes are made through Selenium, independently of Branchwise."""

from __future__ import annotations

import itertools
import time

import pytest

from branchwise.actions import GoBack, Goto
from branchwise.agent.env import BrowserEnv
from branchwise.protocol import Observation

from harness import Stack, in_page

pytestmark = pytest.mark.e2e

_cases = itertools.count()


def open_page(stack: Stack, pages_port: int, query: str = "") -> tuple[str, BrowserEnv]:
    """The page, observed until it holds still: once the debugger attaches, Chromium's "debugging this browser" bar
    shrinks the viewport a moment later, a real change."""
    url = f"http://127.0.0.1:{pages_port}/reuse.html?case={next(_cases)}{query}"
    tab = stack.call(stack.session.browser.open_tab(url))
    env = BrowserEnv(stack.session.browser, tab.tab_id)
    # Three reused captures in a row: one alone can fall just before a late change (a clean-clone run saw the next
    # capture taken afresh).
    still = 0
    for _ in range(40):
        still = still + 1 if stack.call(stack.session.browser.observe(env.tab_id)).reused else 0
        if still == 3:
            return url, env
        time.sleep(0.1)
    raise AssertionError("the page never held still")


def observe(stack: Stack, env: BrowserEnv) -> tuple[Observation, str]:
    """The observation as the browser layer returns it, and the text the model reads of that capture (read right
    after it: the page is still, so that capture is reused)."""
    observation = stack.call(stack.session.browser.observe(env.tab_id))
    return observation, stack.call(env.observe()).text


def test_an_unchanged_page_is_not_captured_again_and_reads_the_same(stack: Stack, pages_port: int) -> None:
    _, env = open_page(stack, pages_port)
    first = stack.call(env.observe())
    assert stack.call(stack.session.browser.observe(env.tab_id)).reused
    again = stack.call(stack.session.browser.observe(env.tab_id))
    assert again.reused and again.capture_id, "the second look at an unchanged page captured it again"
    assert again.frames, "the kept frames stand in for the reused capture"
    assert stack.call(env.observe()).text == first.text
    stack.call(stack.session.browser.close_tab(env.tab_id))


CHANGES = {
    "a paragraph added": ("document.body.append(Object.assign(document.createElement('p'), "
                          "{textContent: 'Added by a script'}))", "Added by a script"),
    "a value set by a script, no event": ("document.getElementById('note').value = 'set quietly'", "set quietly"),
    "a checkbox ticked by a script": ("document.getElementById('agree').checked = true", "checked: True"),
    "text in an open shadow root": ("document.getElementById('card').shadowRoot.querySelector('span').textContent = "
                                    "'Shadow changed'", "Shadow changed"),
    "text in a same-origin frame": ("document.getElementById('frame').contentDocument.getElementById('inner')"
                                    ".textContent = 'Frame changed'", "Frame changed"),
    "an element hidden by its style": ("document.getElementById('hideable').style.display = 'none'", None),
    "the page scrolled": ("scrollTo(0, 800)", None),
    # Its position is in no stamp: the watcher counts its scroll event, which comes a frame later (awaited here).
    "a box scrolled": ("const box = document.getElementById('box'); box.scrollTop = 40; return new Promise("
                       "(done) => box.addEventListener('scroll', () => done(), {once: true}))", None),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_is_captured_afresh(stack: Stack, pages_port: int, change: str) -> None:
    url, env = open_page(stack, pages_port)
    before, text_before = observe(stack, env)
    assert before.reused, "the page was still changing before the test changed it"
    script, shown = CHANGES[change]
    in_page(stack, url, script)
    after, text_after = observe(stack, env)
    assert not after.reused, f"{change}: the stale capture was reused"
    if shown is not None:
        assert shown in text_after and shown not in text_before, text_after
    elif change.startswith("an element hidden"):
        assert "Shown until hidden" in text_before and "Shown until hidden" not in text_after
    # Once the page is still again, its new capture is reused.
    assert observe(stack, env)[0].reused
    stack.call(stack.session.browser.close_tab(env.tab_id))


def test_the_windows_scroll_event_arriving_late_keeps_the_capture(stack: Stack, pages_port: int) -> None:
    """The browser sends the window's scroll event a frame after the scroll, which under load can be after the next
    capture: that capture already shows the new position (it is in the stamp), and the late event is no change."""
    url, env = open_page(stack, pages_port)
    in_page(stack, url, "document.dispatchEvent(new Event('scroll'))")
    assert observe(stack, env)[0].reused, "a scroll event with nothing scrolled discarded the capture"
    stack.call(stack.session.browser.close_tab(env.tab_id))


def test_the_same_page_loaded_again_is_captured_afresh(stack: Stack, pages_port: int) -> None:
    """It reads the same, but its element ids are new: the old capture's would not resolve. (Each new document's
    watcher starts from zero, so only the document's own id in the stamp tells two loads apart.)"""
    url, env = open_page(stack, pages_port, "&noframe")
    for _ in range(3):
        assert stack.call(env.execute(Goto(url))).ok
        observation = stack.call(stack.session.browser.observe(env.tab_id))
        assert not observation.reused, "the capture of the previous document was reused"
    stack.call(stack.session.browser.close_tab(env.tab_id))


def test_a_page_back_from_the_back_forward_cache_is_captured_afresh(stack: Stack, pages_port: int) -> None:
    """Going back restores the earlier document as it was, watcher and all; the capture kept is the second page's."""
    _, env = open_page(stack, pages_port, "&noframe")
    assert stack.call(env.execute(Goto(f"http://127.0.0.1:{pages_port}/second.html?bfcache"))).ok
    assert "Second page" in observe(stack, env)[1]
    assert stack.call(env.execute(GoBack())).ok
    observation, text = observe(stack, env)
    assert not observation.reused and "Observing again" in text and "Second page" not in text, text
    stack.call(stack.session.browser.close_tab(env.tab_id))
