"""Taking a tab back from the side panel: Branchwise no longer reads or drives it, and lets go of everything it held
there (the network gate, the debugger, the tab group); a request the gate held at that moment fails rather than going
out unasked; while a run goes on, the button waits for Stop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from branchwise.agent.env import BrowserEnv
from branchwise.config import EXTENSION_ID
from branchwise.core.approval import ApprovalRequest, Decision
from branchwise.link import ExtensionError
from branchwise.protocol import RequestHeld
from branchwise.safety.gate import GateRun
from branchwise.sandbox.recording import Recorded, RecordingServer, Reply
from branchwise.store import RunStore, RunWriter

from harness import Stack, in_extension, recording, wait_for

pytestmark = pytest.mark.e2e
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel.html"

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>My own tab {who}</title></head><body>
<p id="status">idle</p>
<button onclick="fetch('/save?who={who}', {{method: 'POST', body: 'mine'}}).then(
  (r) => {{ document.getElementById('status').textContent = 'status ' + r.status; }},
  (e) => {{ document.getElementById('status').textContent = 'failed: ' + e; }})">Save</button>
</body></html>"""


def respond(request: Recorded, port: int) -> Reply | None:
    return Reply(PAGE.format(who=request.who)) if request.route == "/page" else None


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer(respond) as rec:
        yield rec


class NeverAnswers:
    """The run's approver, asked about the held post and never answering: the hold waits as it would for a user who
    has not decided yet."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        await asyncio.Event().wait()
        raise AssertionError("never answered")


def tab_facts(stack: Stack, tab_id: int) -> list[object]:
    """The tab's group, and whether the extension's debugger is attached to it: a command through it is answered only
    then (`chrome.debugger.getTargets` would say attached for Selenium's own session too)."""
    facts: list[object] = in_extension(stack, f"""async () => {{
      const tab = await chrome.tabs.get({tab_id});
      const probe = {{ expression: "1" }};
      const attached = await chrome.debugger.sendCommand({{ tabId: {tab_id} }}, "Runtime.evaluate", probe)
        .then(() => true, () => false);
      return [tab.groupId, attached];
    }}""")
    return facts


def take_back_button(driver: WebDriver, tab_id: int) -> object:
    return driver.execute_script(
        "return document.querySelector(`#handed-tabs li[data-tab-id='${arguments[0]}'] button.take-back`);", tab_id)


def set_panel_runs(driver: WebDriver, runs: list[dict[str, object]]) -> None:
    driver.execute_async_script("chrome.storage.session.set({runs: arguments[0]}).then(arguments[1]);", runs)


def switch_to(driver: WebDriver, url: str) -> None:
    for handle in driver.window_handles:
        driver.switch_to.window(handle)
        if driver.current_url == url:
            return
    raise AssertionError(f"no tab shows {url}")


@contextlib.contextmanager
def gated_page(stack: Stack, server: RecordingServer, store: RunStore, who: str) -> Iterator[tuple[int, NeverAnswers]]:
    """A tab on the page, under a run's gate whose approver never answers: (its id, the approver)."""
    tab = stack.call(stack.session.browser.open_tab(f"{server.base_url}/page?who={who}"))
    approver = NeverAnswers()
    gated = stack.session.gate.active(BrowserEnv(stack.session.browser, tab.tab_id),
                                      GateRun("r1", RunWriter(store, "r1"), approver))
    stack.call(gated.__aenter__())
    try:
        yield tab.tab_id, approver
    finally:
        stack.call(gated.__aexit__(None, None, None))


def test_a_tab_taken_back_from_the_panel_is_the_users_again(stack: Stack, server: RecordingServer,
                                                            store: RunStore) -> None:
    browser = stack.session.browser
    url = f"{server.base_url}/page?who=mine"
    driver = stack.driver
    with gated_page(stack, server, store, "mine") as (tab_id, approver):
        group, attached = tab_facts(stack, tab_id)
        assert group != -1 and attached, "handed over and gated: in the Branchwise group, the debugger attached"
        # The user posts in the tab while the run's gate is on: held, and the run's approver is asked.
        switch_to(driver, url)
        driver.find_element(By.TAG_NAME, "button").click()
        wait_for(lambda: approver.requests, what="the held post to be asked about")

        driver.switch_to.new_window("tab")
        driver.get(PANEL)
        wait_for(lambda: take_back_button(driver, tab_id), what="the tab listed in the panel")
        listed = driver.find_element(By.CSS_SELECTOR, f"#handed-tabs li[data-tab-id='{tab_id}']")
        assert "My own tab mine" in listed.text

        # While a run goes on, Take back waits for Stop.
        set_panel_runs(driver, [{"run_id": "r1", "task": "t", "status": "running", "steps": [], "answer": "",
                                 "message": ""}])
        wait_for(lambda: not driver.find_element(By.CSS_SELECTOR, "button.take-back").is_enabled(),
                 what="disabled")
        assert "stop it to take a tab back" in driver.find_element(By.ID, "handed-hint").text
        # The worker holds to it as well, whoever asks.
        refused = driver.execute_async_script(
            "chrome.runtime.sendMessage({kind: 'take_back', tabId: arguments[0]}).then(arguments[1]);", tab_id)
        assert refused == {"error": "A run is going on: stop it before taking a tab back."}
        set_panel_runs(driver, [])
        wait_for(lambda: driver.find_element(By.CSS_SELECTOR, "button.take-back").is_enabled(), what="enabled again")

        driver.find_element(By.CSS_SELECTOR, "button.take-back").click()
        wait_for(lambda: driver.find_element(By.ID, "handed").get_attribute("hidden") is not None,
                 what="the list to empty")

        assert all(t.tab_id != tab_id for t in stack.call(browser.list_tabs()))
        with pytest.raises(ExtensionError) as refused:
            stack.call(browser.observe(tab_id))
        assert refused.value.code == "tab_not_handed_over"
        assert tab_facts(stack, tab_id) == [-1, False]

        # The post held when the tab was taken back failed: it never went out unasked.
        switch_to(driver, url)
        wait_for(lambda: driver.find_element(By.ID, "status").text.startswith("failed: TypeError"),
                 what="the held post to fail")
        assert server.mutating("mine") == []

        # The gate is off: the user's next post goes out at once, held by nobody.
        with recording(stack) as events:
            driver.find_element(By.TAG_NAME, "button").click()
            wait_for(lambda: driver.find_element(By.ID, "status").text == "status 200", what="the post's answer")
        assert server.mutating("mine") == [("POST", "/save?who=mine")]
        assert not [e for e in events if isinstance(e, RequestHeld)]


def test_a_held_request_goes_out_when_the_debugger_detaches_even_past_a_block_rule_set_meanwhile(
        stack: Stack, server: RecordingServer, store: RunStore) -> None:
    """Chromium's part of why the gate reports a hold the browser let go instead of stopping it (docs/platform.md):
    a paused request continues when the debugger session ends, and a declarativeNetRequest rule blocking the tab's
    posts, added while it waits, does not stop it (the rule was weighed before Fetch paused the request). The user's
    cancelling the "is debugging this browser" bar ends the session the same way; headless Chromium has no bar, so
    the extension detaches here itself."""
    url = f"{server.base_url}/page?who=gone"
    driver = stack.driver
    with gated_page(stack, server, store, "gone") as (tab_id, approver):
        switch_to(driver, url)
        driver.find_element(By.TAG_NAME, "button").click()
        wait_for(lambda: approver.requests, what="the held post to be asked about")
        assert server.mutating("gone") == []
        rule = (f'{{id: 4242, priority: 1, action: {{type: "block"}}, '
                f'condition: {{tabIds: [{tab_id}], excludedRequestMethods: ["get", "head"]}}}}')
        try:
            in_extension(stack, f"""async () => {{
              await chrome.declarativeNetRequest.updateSessionRules({{addRules: [{rule}]}});
              await chrome.debugger.detach({{tabId: {tab_id}}});
            }}""")
            wait_for(lambda: server.mutating("gone"), what="the held post to reach the server")
            assert server.mutating("gone") == [("POST", "/save?who=gone")]
        finally:
            in_extension(stack, "async () => chrome.declarativeNetRequest.updateSessionRules({removeRuleIds: [4242]})")
