"""An approved action's allowance in real Chromium: the classifier reads what a POST form will send off the real DOM,
and the extension's gate lets exactly that through, once (the fragment ignored, the query compared, its 307 redirect
followed); every other mutating request the approved click makes is held and asked about. The server's own record
is the judge."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from branchwise.actions import Click
from branchwise.agent.env import BrowserEnv, ExecResult
from branchwise.core.approval import ScriptedApprover
from branchwise.core.classes import ActionClass
from branchwise.core.requests import ExpectedRequest, GatedRequest
from branchwise.safety import SafetyClassifier
from branchwise.safety.gate import GateRun
from branchwise.sandbox.recording import Recorded, RecordingServer, Reply
from branchwise.store import RunStore, RunWriter

from harness import Stack, wait_for

pytestmark = pytest.mark.e2e

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Allowance {who}</title></head><body>
<form method="post" action="/moved?who={who}#thanks"><input type="hidden" name="list" value="a">
  <button>Subscribe</button></form>
<form method="post" action="/subscribe?who={who}"><input type="hidden" name="list" value="b">
  <button onclick="fetch('/subscribe?who={who}', {{method: 'POST', body: 'again', keepalive: true}});
    fetch('/subscribe?who={who}&list=c', {{method: 'POST', body: 'other', keepalive: true}})">Subscribe twice</button>
</form>
<form method="post" action="/away?who={who}"><input type="hidden" name="list" value="d">
  <button>Subscribe elsewhere</button></form></body></html>"""


def respond(request: Recorded, port: int) -> Reply | None:
    if request.route == "/moved":  # sent on with method and body kept
        return Reply(status=307, headers=(("Location", f"/subscribed?who={request.who}"),))
    if request.route == "/away":  # sent on to another origin (another host name for this server)
        return Reply(status=307, headers=(("Location", f"http://localhost:{port}/subscribed?who={request.who}"),))
    return Reply(PAGE.format(who=request.who)) if request.route == "/page" else None


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer(respond) as rec:
        yield rec



@contextlib.contextmanager
def approved_click(stack: Stack, server: RecordingServer, store: RunStore, who: str, button: str,
                   ) -> Iterator[tuple[tuple[ExpectedRequest, ...], Callable[[], ExecResult], ScriptedApprover]]:
    """The page in a gated tab, the button's verdict from its real DOM facts, and a click run as the user approved it
    (every question the gate asks meanwhile is denied)."""
    browser = stack.session.browser
    tab = stack.call(browser.open_tab(f"{server.base_url}/page?who={who}"))
    env = BrowserEnv(browser, tab.tab_id)
    approver = ScriptedApprover([])
    gate = stack.session.gate
    try:
        view = stack.call(env.observe())
        assert view.page is not None
        target = next(e.id for e in view.page.elements.values() if e.role == "button" and e.name == button)
        facts = stack.call(env.inspect([target]))[target]
        verdict = SafetyClassifier().classify(Click(target), view.page, facts)
        assert verdict.action_class is ActionClass.DESTRUCTIVE

        async def click() -> ExecResult:
            async with gate.active(env, GateRun("r1", RunWriter(store, "r1"), approver)):
                return await env.execute(Click(target), allow=verdict.sends)

        yield verdict.sends, lambda: stack.call(click()), approver
    finally:
        with contextlib.suppress(Exception):
            stack.call(browser.close_tab(env.tab_id))


def test_the_approved_form_post_goes_through_once_with_its_redirect(
        stack: Stack, server: RecordingServer, store: RunStore) -> None:
    with approved_click(stack, server, store, "once", "Subscribe") as (sends, click, approver):
        # The fragment of the action never reaches the server: it is not part of what the approval names.
        assert sends == (ExpectedRequest("POST", f"{server.base_url}/moved?who=once"),)
        result = click()
        wait_for(lambda: server.got("POST", "/subscribed?who=once"), what="the redirected POST")
    assert approver.requests == []
    assert server.mutating("once") == [("POST", "/moved?who=once"), ("POST", "/subscribed?who=once")]
    assert result.requests == (GatedRequest("POST", f"{server.base_url}/moved?who=once", "allowed"),
                               GatedRequest("POST", f"{server.base_url}/subscribed?who=once", "allowed"))
    notes = [r.note for r in store.audit_log("r1") if r.kind == "request_seen"]
    assert notes == [f"let through once: the approval of the action covers POST {server.base_url}/moved?who=once",
                     f"let through: a redirect of {server.base_url}/moved?who=once, which was let through"]


def test_the_allowance_is_used_up_and_a_different_query_is_asked_about(
        stack: Stack, server: RecordingServer, store: RunStore) -> None:
    with approved_click(stack, server, store, "twice", "Subscribe twice") as (sends, click, approver):
        assert sends == (ExpectedRequest("POST", f"{server.base_url}/subscribe?who=twice"),)
        result = click()
    # Three POSTs tried: whichever to /subscribe?who=twice came first used the entry; the other one, and the one with
    # another query, were held, asked about as the approved action's, and denied.
    assert [(method, path.split("&")[0]) for method, path in server.mutating("twice")] == [
        ("POST", "/subscribe?who=twice")]
    assert result.requests is not None, "the click ran under the gate"
    assert sorted(r.outcome for r in result.requests) == ["allowed", "failed", "failed"]
    assert len(approver.requests) == 2
    for question in approver.requests:
        why = question.reasons[0]
        assert why.startswith("the approved action `click [") and why.endswith(
            f"]` also tried to send it; the approval covers only POST to {server.base_url}/subscribe?who=twice"), why
    held = sorted(r.request_url for r in store.audit_log("r1") if r.kind == "request_held")
    assert held == [f"{server.base_url}/subscribe?who=twice", f"{server.base_url}/subscribe?who=twice&list=c"]


def test_a_redirect_of_the_approved_post_to_another_origin_is_asked_about(
        stack: Stack, server: RecordingServer, store: RunStore) -> None:
    with approved_click(stack, server, store, "away", "Subscribe elsewhere") as (sends, click, approver):
        assert sends == (ExpectedRequest("POST", f"{server.base_url}/away?who=away"),)
        result = click()
    # The approval named /away on this origin; the 307 to another one was held, asked about and denied.
    assert server.mutating("away") == [("POST", "/away?who=away")]
    assert result.requests is not None, "the click ran under the gate"
    assert [r.outcome for r in result.requests] == ["allowed", "failed"]
    assert len(approver.requests) == 1
    assert approver.requests[0].action_text.endswith(f"localhost:{server.port}/subscribed?who=away")
