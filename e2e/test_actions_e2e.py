"""Every action type, from the typed action through the backend, the extension and CDP, changes the real page.

The page is checked independently through Selenium, attached to the same Chromium.
"""

from __future__ import annotations

import json
import time

import pytest

from branchwise.actions import (
    Click,
    CloseTab,
    GoBack,
    GoForward,
    Goto,
    Hover,
    NewTab,
    Press,
    Scroll,
    SelectOption,
    TabFocus,
    Type,
)
from branchwise.agent.env import DIALOG_CANCEL_ID, DIALOG_INPUT_ID, DIALOG_OK_ID, BrowserEnv, EnvView

from harness import Stack, in_extension, in_page

pytestmark = pytest.mark.e2e


def open_env(stack: Stack, url: str) -> BrowserEnv:
    tab = stack.call(stack.session.browser.open_tab(url))
    return BrowserEnv(stack.session.browser, tab.tab_id)


def observe(stack: Stack, env: BrowserEnv) -> EnvView:
    return stack.call(env.observe())


def element(view: EnvView, role: str, name: str) -> int:
    assert view.page is not None
    found = [e.id for e in view.page.elements.values() if e.role == role and e.name == name]
    assert found, f"no {role} '{name}' in:\n{view.text}"
    return found[0]


def status(stack: Stack, url: str) -> str:
    text: str = in_page(stack, url, "return document.getElementById('status').textContent")
    return text


def act(stack: Stack, env: BrowserEnv, action: object) -> None:
    observe(stack, env)
    result = stack.call(env.execute(action))  # type: ignore[arg-type]
    assert result.ok, result.error


@pytest.fixture
def lab(stack: Stack, pages_port: int, request: pytest.FixtureRequest) -> tuple[BrowserEnv, str]:
    url = f"http://127.0.0.1:{pages_port}/actions.html?test={request.node.name}"
    return open_env(stack, url), url


def test_click_is_trusted(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    view = observe(stack, env)
    stack.call(env.execute(Click(element(view, "button", "Clicked 0 times"))))
    assert in_page(stack, url, "return document.getElementById('counter').textContent") == "Clicked 1 times"
    assert status(stack, url) == "trusted click"
    assert "button 'Clicked 1 times'" in observe(stack, env).text


def test_hover(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    act(stack, env, Hover(element(observe(stack, env), "button", "Hover target")))
    assert status(stack, url) == "hovered"


def test_type_clears_first_and_enter_submits(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    view = observe(stack, env)
    act(stack, env, Type(element(view, "textbox", "Your name"), "Ada Lovelace", press_enter=False))
    assert in_page(stack, url, "return document.getElementById('name').value") == "Ada Lovelace"
    assert status(stack, url) == "Nothing happened yet"
    act(stack, env, Type(element(view, "searchbox", "Search the lab"), "tents", press_enter=True))
    assert status(stack, url) == "searched for tents"


def test_press_key_combinations(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    # Shift+Tab last: from the page it moves focus into the last iframe, which then gets the keys.
    act(stack, env, Press("Control+k"))
    act(stack, env, Press("Escape"))
    # Playwright's ControlOrMeta is Control off a Mac.
    act(stack, env, Press("ControlOrMeta+j"))
    act(stack, env, Press("Shift+Tab"))
    assert in_page(stack, url, "return document.getElementById('keys').textContent").split() == [
        "Control+k", "Escape", "Control+j", "Shift+Tab"]


def test_scroll_down_and_up(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    act(stack, env, Scroll("down"))
    down = in_page(stack, url, "return scrollY")
    assert down > 300
    act(stack, env, Scroll("up"))
    assert in_page(stack, url, "return scrollY") < down


def scrolled(stack: Stack, *tab_ids: int, what: str = "scrollY") -> list[tuple[float, float]]:
    """Each tab's scroll position (`what`, a JS expression) and viewport height, read through the extension's
    debugger: Selenium's switching tabs would bring one on screen."""
    expression = json.dumps(f"[{what}, innerHeight]")
    reads = ", ".join(f'chrome.debugger.sendCommand({{tabId: {t}}}, "Runtime.evaluate", {{expression: {expression}, '
                      f'returnByValue: true}}).then((r) => r.result.value)' for t in tab_ids)
    found: list[list[float]] = in_extension(stack, f"async () => Promise.all([{reads}])")
    return [(y, height) for y, height in found]


def test_a_tab_not_on_screen_scrolls_as_one_on_screen_does(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    """A replay runs in a throw-away tab opened in the background, where a wheel event never arrives (Chromium sends
    it with a rendered frame, and a hidden tab renders none): its `scroll` timed out after 45 s, and the replay with
    it. Both tabs scroll by 0.8 of their own viewport (the two may differ in height)."""
    env, url = lab
    hidden = stack.call(stack.session.browser.open_tab(url + "&hidden=1", active=False, guarded=True))
    hidden_env = BrowserEnv(stack.session.browser, hidden.tab_id)
    stack.call(stack.session.browser.activate_tab(env.tab_id))
    act(stack, env, Scroll("down"))
    act(stack, hidden_env, Scroll("down"))
    (shown_y, shown_height), (hidden_y, hidden_height) = scrolled(stack, env.tab_id, hidden.tab_id)
    assert shown_y > 300 and abs(shown_y - 0.8 * shown_height) <= 1, (shown_y, shown_height)
    assert abs(hidden_y - 0.8 * hidden_height) <= 1, (hidden_y, hidden_height)
    act(stack, hidden_env, Scroll("up"))
    assert scrolled(stack, hidden.tab_id)[0][0] < hidden_y


def test_off_screen_a_scroll_moves_what_a_wheel_on_screen_moves(stack: Stack, pages_port: int) -> None:
    """On a page that cannot scroll itself, the wheel scrolls the pane under the pointer: so does the scroll by
    script in a tab not on screen."""
    url = f"http://127.0.0.1:{pages_port}/pane.html"
    shown = stack.call(stack.session.browser.open_tab(url))
    hidden = stack.call(stack.session.browser.open_tab(url + "?hidden=1", active=False, guarded=True))
    for tab in (shown, hidden):
        act(stack, BrowserEnv(stack.session.browser, tab.tab_id), Scroll("down"))
    panes = scrolled(stack, shown.tab_id, hidden.tab_id, what="document.getElementById('pane').scrollTop")
    pages = scrolled(stack, shown.tab_id, hidden.tab_id)
    assert [y for y, _ in pages] == [0, 0]
    for y, height in panes:
        assert abs(y - 0.8 * height) <= 1, panes


def test_select_option(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    act(stack, env, SelectOption(element(observe(stack, env), "combobox", "Color"), ("Blue",)))
    assert in_page(stack, url, "return document.getElementById('color').value") == "Blue"
    assert status(stack, url) == "color is Blue"


def test_unknown_option_fails_with_the_choices(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, _ = lab
    view = observe(stack, env)
    result = stack.call(env.execute(SelectOption(element(view, "combobox", "Color"), ("Purple",))))
    assert not result.ok and 'no option "Purple"' in result.error and '"Green"' in result.error


def test_goto_back_and_forward(stack: Stack, lab: tuple[BrowserEnv, str], pages_port: int) -> None:
    env, url = lab
    second = f"http://127.0.0.1:{pages_port}/second.html?test=goto"
    act(stack, env, Goto(second))
    assert observe(stack, env).url == second
    act(stack, env, GoBack())
    assert observe(stack, env).url == url
    act(stack, env, GoForward())
    view = observe(stack, env)
    assert view.url == second and "heading 'Second page'" in view.text


def test_tabs_new_focus_close_and_links_opening_tabs(stack: Stack, lab: tuple[BrowserEnv, str],
                                                     pages_port: int) -> None:
    env, url = lab
    first_tab = env.tab_id
    act(stack, env, Click(element(observe(stack, env), "link", "Second page in a new tab")))
    tabs = stack.call(stack.session.browser.list_tabs())
    assert any(t.url.endswith("second.html?from=blank") for t in tabs), \
        "a tab opened by a handed-over tab is handed over"

    act(stack, env, NewTab(f"http://127.0.0.1:{pages_port}/second.html?test=newtab"))
    assert env.tab_id != first_tab
    assert observe(stack, env).url.endswith("test=newtab")

    tabs = stack.call(stack.session.browser.list_tabs())
    first_index = next(t.index for t in tabs if t.tab_id == first_tab)
    act(stack, env, TabFocus(first_index))
    assert env.tab_id == first_tab and observe(stack, env).url == url

    before = len(tabs)
    act(stack, env, CloseTab())
    after = stack.call(stack.session.browser.list_tabs())
    assert len(after) == before - 1 and first_tab not in {t.tab_id for t in after}


def test_dialogs_are_reported_and_answered(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    act(stack, env, Click(element(observe(stack, env), "button", "Show alert")))
    view = observe(stack, env)
    assert view.dialog is not None and view.dialog.message == "Saved!"
    assert "alertdialog 'Saved!'" in view.text
    act(stack, env, Click(DIALOG_OK_ID))
    assert status(stack, url) == "alert closed"

    act(stack, env, Click(element(observe(stack, env), "button", "Ask to confirm")))
    assert observe(stack, env).dialog is not None
    act(stack, env, Click(DIALOG_CANCEL_ID))
    assert status(stack, url) == "cancelled"

    act(stack, env, Click(element(observe(stack, env), "button", "Ask for a city")))
    assert "value: Paris" in observe(stack, env).text
    act(stack, env, Type(DIALOG_INPUT_ID, "Berlin", press_enter=True))
    assert status(stack, url) == "city: Berlin"


def test_clicks_reach_same_and_cross_origin_iframes(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, _ = lab
    deadline = time.time() + 10
    while True:  # the cross-origin frame's src is set by script after load
        view = observe(stack, env)
        assert view.page is not None
        widgets = [e for e in view.page.elements.values() if e.role == "button" and e.name == "Widget not pressed"]
        if len(widgets) == 2 or time.time() > deadline:
            break
        time.sleep(0.2)
    assert len(widgets) == 2, view.text
    assert {w.target is None for w in widgets} == {True, False}, "one frame in process, one out of process"
    for widget in widgets:
        act(stack, env, Click(widget.id))
    text = observe(stack, env).text
    assert "button 'Widget pressed on 127.0.0.1'" in text
    assert "button 'Widget pressed on localhost'" in text
