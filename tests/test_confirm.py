"""The side-panel confirmation broker, against the real backend and its ExtensionHub over a real local WebSocket, with a
Python client playing the extension: an answer counts once and only with the card's id and nonce; no answer in time,
a stopped run or a missing extension is a denial; the card is always closed."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from branchwise.actions import Click
from branchwise.agent.records import RunResult
from branchwise.agent.reporting import Reporters, SidePanelReporter
from branchwise.cli import cli_approver, parse_args, run_options
from branchwise.core.approval import ApprovalRequest, Decision, approval_request, live_element_ref
from branchwise.core.classes import ActionClass, Classification
from branchwise.core.requests import ExpectedRequest
from branchwise.protocol import ElementRef
from branchwise.safety.confirm import ConfirmConfig, SidePanelApprover
from branchwise.search.trace import SearchTrace
from branchwise.store import RunRecord, RunStore

from extension_client import Backend, paired_socket, receive_json, running_backend
from pageviews import page

REASON = "the button 'Add to cart' submits a POST form to /cart/add"
URL = "http://shop.test/product/7"


def request(**overrides: Any) -> ApprovalRequest:
    fields: dict[str, Any] = dict(run_id="r1", action_text="click [2]", url=URL, element="button 'Add to cart'",
                                  reasons=(REASON,), tab_id=1842, element_ref=ElementRef(backend_node_id=57),
                                  sends=(ExpectedRequest("POST", "http://shop.test/cart/add"),))
    return ApprovalRequest(**(fields | overrides))


def run(coro: Awaitable[None]) -> None:
    asyncio.run(asyncio.wait_for(coro, 30))


Scenario = Callable[[Backend, ClientConnection, SidePanelApprover], Awaitable[None]]


def with_panel(tmp_path: Path, scenario: Scenario, timeout: float = 10.0) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            approver = SidePanelApprover(backend.hub, ConfirmConfig(timeout_seconds=timeout))
            try:
                await scenario(backend, ws, approver)
            finally:
                approver.close()
                await ws.close()

    run(main())


async def answer(ws: ClientConnection, approval_id: str, nonce: str, approved: bool) -> None:
    await ws.send(json.dumps({"type": "confirm_answer", "id": f"ans-{approved}", "approval_id": approval_id,
                              "nonce": nonce, "approved": approved}))


def test_the_card_carries_what_where_the_element_and_why_and_a_matching_answer_approves_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    asked = request()

    async def scenario(backend: Backend, ws: ClientConnection, approver: SidePanelApprover) -> None:
        decision = asyncio.create_task(approver.decide(asked))
        card = await receive_json(ws)
        assert card == {
            "type": "confirm_request", "id": card["id"], "run_id": "r1", "approval_id": asked.approval_id,
            "nonce": asked.nonce, "kind": "action", "tab_id": 1842, "action_text": "click [2]", "url": URL,
            "element_label": "button 'Add to cart'", "element": {"backend_node_id": 57}, "reasons": [REASON],
            "timeout_s": 10.0, "sends": [{"method": "POST", "url": "http://shop.test/cart/add"}],
        }
        await answer(ws, asked.approval_id, asked.nonce, True)
        assert await decision == Decision(True, "user (side panel)")
        assert (await decision).outcome == "approved"
        closed = await receive_json(ws)
        assert (closed["type"], closed["approval_id"], closed["outcome"]) == (
            "confirm_closed", asked.approval_id, "approved")
        # The same answer again (a double click, a replay) is only logged.
        await answer(ws, asked.approval_id, asked.nonce, True)
        await ws.send(json.dumps({"type": "ping", "id": "p1"}))
        assert (await receive_json(ws))["type"] == "pong", "nothing else was sent"

    with caplog.at_level(logging.INFO, logger="branchwise"):
        with_panel(tmp_path, scenario)
    assert "it was already closed (approved); an approval counts once" in caplog.text


def test_a_wrong_or_reused_nonce_is_ignored_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    first, second = request(), request(action_text="click [3]")
    assert first.approval_id != second.approval_id and first.nonce != second.nonce

    async def scenario(backend: Backend, ws: ClientConnection, approver: SidePanelApprover) -> None:
        one = asyncio.create_task(approver.decide(first))
        await receive_json(ws)
        await answer(ws, first.approval_id, first.nonce, False)
        assert (await one).outcome == "denied"
        assert (await receive_json(ws))["outcome"] == "denied"

        two = asyncio.create_task(approver.decide(second))
        await receive_json(ws)
        await answer(ws, second.approval_id, "guessed-nonce", True)
        await answer(ws, second.approval_id, first.nonce, True)  # the last question's nonce, on this question
        await asyncio.sleep(0.2)
        assert not two.done(), "neither answer counted"
        await answer(ws, second.approval_id, second.nonce, False)
        assert await two == Decision(False, "user (side panel)")

    with caplog.at_level(logging.WARNING, logger="branchwise"):
        with_panel(tmp_path, scenario)
    assert caplog.text.count(f"ignored an answer to confirmation {second.approval_id}: wrong nonce") == 2
    assert second.nonce not in caplog.text and first.nonce not in caplog.text, "nonces stay out of the log"


def test_no_answer_in_time_is_a_denial_by_timeout_and_the_card_closes(tmp_path: Path) -> None:
    asked = request()

    async def scenario(backend: Backend, ws: ClientConnection, approver: SidePanelApprover) -> None:
        decision = asyncio.create_task(approver.decide(asked))
        assert (await receive_json(ws))["timeout_s"] == 0.3
        closed = await receive_json(ws)
        assert (closed["type"], closed["outcome"]) == ("confirm_closed", "timeout")
        got = await decision
        assert got == Decision(False, "timeout", "no answer in the side panel within 0.3 s", timed_out=True)
        assert got.outcome == "timeout"
        # Too late: the question is closed.
        await answer(ws, asked.approval_id, asked.nonce, True)

    with_panel(tmp_path, scenario, timeout=0.3)


def test_without_an_extension_or_when_it_disconnects_the_action_is_denied(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            approver = SidePanelApprover(backend.hub)
            nobody = await approver.decide(request())
            assert not nobody.approved and nobody.by == "policy" and "not connected" in nobody.note

            ws = await paired_socket(backend)
            decision = asyncio.create_task(approver.decide(request()))
            assert (await receive_json(ws))["type"] == "confirm_request"
            await ws.close()
            gone = await decision
            assert not gone.approved and not gone.timed_out and "disconnected before the user answered" in gone.note

    run(main())


def test_a_stopped_run_closes_its_card_as_denied(tmp_path: Path) -> None:
    async def scenario(backend: Backend, ws: ClientConnection, approver: SidePanelApprover) -> None:
        asked = request()
        decision = asyncio.create_task(approver.decide(asked))
        await receive_json(ws)
        decision.cancel()
        closed = await receive_json(ws)
        assert (closed["approval_id"], closed["outcome"]) == (asked.approval_id, "denied")
        with pytest.raises(asyncio.CancelledError):
            await decision

    with_panel(tmp_path, scenario)


def test_request_confirmations_carry_the_held_request(tmp_path: Path) -> None:
    """The network gate asks through the same broker with kind=request."""
    from branchwise.protocol import ConfirmRequest

    async def scenario(backend: Backend, ws: ClientConnection, approver: SidePanelApprover) -> None:
        message = ConfirmRequest(run_id="r1", approval_id="g1", nonce="n" * 22, kind="request", tab_id=7,
                                 url=URL, reasons=["a POST no approval covers"], timeout_s=5,
                                 request_method="POST", request_url="http://shop.test/cart/add")
        decision = asyncio.create_task(approver.confirm(message))
        card = await receive_json(ws)
        assert (card["kind"], card["request_method"], card["request_url"]) == (
            "request", "POST", "http://shop.test/cart/add")
        await answer(ws, "g1", "n" * 22, True)
        assert (await decision).approved

    with_panel(tmp_path, scenario)


def test_the_audit_log_keeps_the_binding_and_tells_a_timeout_from_a_denial(tmp_path: Path) -> None:
    asked = request()
    verdict = Classification(ActionClass.DESTRUCTIVE, (REASON,))

    async def main() -> None:
        with RunStore(tmp_path / "runs.sqlite3") as store:
            store.start_run(RunRecord(run_id="r1", task="add it"))
            trace = SearchTrace("r1", "best_first", Reporters(), store)
            await trace.classified(0, asked.action_text, verdict)
            await trace.asked(0, asked, verdict)
            timeout = Decision(False, "timeout", "no answer in the side panel within 3 s", timed_out=True)
            await trace.decided(0, asked, verdict, timeout)
            await trace.writer.finish("failed", "", "denied")
            log = store.audit_log("r1")
            stored = store.load_run("r1")
        asked_row, decided_row = (e for e in log if e.kind in ("asked", "decided"))
        assert (asked_row.approval_id, asked_row.nonce) == (asked.approval_id, asked.nonce)
        assert (decided_row.approval_id, decided_row.nonce) == (asked.approval_id, asked.nonce)
        assert (decided_row.decision, decided_row.decided_by, decided_row.note) == (
            "timeout", None, "no answer in the side panel within 3 s")
        assert [(c.decision, c.decided_by) for c in stored.classifications] == [("denied", "timeout")]

    asyncio.run(main())


def test_the_highlighted_element_is_the_one_in_the_page_the_tab_shows_now() -> None:
    proposed = page(("link", "Home"), ("button", "Add to cart"), url=URL)
    # A fresh capture of the same page numbers the button 3 (backend node 3).
    fresh = page(("link", "Home"), ("link", "Reviews"), ("button", "Add to cart"), url=URL)
    assert live_element_ref(Click(2), proposed, proposed) == ElementRef(backend_node_id=2)
    assert live_element_ref(Click(2), proposed, fresh) == ElementRef(backend_node_id=3)
    assert live_element_ref(Click(2), proposed, None) is None, "the tab shows another page: nothing to highlight"
    assert live_element_ref(Click(9), proposed, proposed) is None
    made = approval_request("r1", Click(2), "click [2]", URL, proposed, Classification(ActionClass.DESTRUCTIVE,
                                                                                      (REASON,)),
                            tab_id=5, shown=fresh)
    assert (made.tab_id, made.element_ref, made.element) == (5, ElementRef(backend_node_id=3), "button 'Add to cart'")
    again = approval_request("r1", Click(2), "click [2]", URL, proposed, Classification(ActionClass.DESTRUCTIVE,
                                                                                       (REASON,)))
    assert made == again and made.approval_id != again.approval_id, "same question, each asked with its own binding"
    assert len(made.nonce) >= 20


def test_confirm_panel_and_its_timeout_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = ["run", "a task", "--start-url", "http://127.0.0.1:1/"]
    options = run_options(parse_args([*base, "--confirm", "panel", "--confirm-timeout", "3"]))
    assert options.confirm == "panel" and options.confirm_config.timeout_seconds == 3
    monkeypatch.setenv("BRANCHWISE_CONFIRM_TIMEOUT", "45")
    assert run_options(parse_args(base)).confirm_config.timeout_seconds == 45
    assert run_options(parse_args(["serve"])).confirm_config.timeout_seconds == 45
    assert run_options(parse_args(["serve", "--confirm-timeout", "7.5"])).confirm_config.timeout_seconds == 7.5
    monkeypatch.delenv("BRANCHWISE_CONFIRM_TIMEOUT")
    assert run_options(parse_args(["serve"])).confirm_config.timeout_seconds == 120
    with pytest.raises(SystemExit):
        parse_args([*base, "--confirm-timeout", "0"])

    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            approver = cli_approver("panel", io.StringIO(), hub=backend.hub,
                                    confirm_config=ConfirmConfig(timeout_seconds=3))
            assert isinstance(approver, SidePanelApprover) and approver.config.timeout_seconds == 3
            approver.close()

    run(main())


def test_the_panel_hears_the_planners_progress_lines_in_the_run_log(tmp_path: Path) -> None:
    async def scenario(backend: Backend, ws: ClientConnection, approver: SidePanelApprover) -> None:
        reporter = SidePanelReporter(backend.hub)
        await reporter.started("r1", "add it")
        await reporter.progress("r1", "not running `click [2]`: denied by user (side panel)")
        await reporter.finished(RunResult(run_id="r1", task="add it", status="failed", reason="not allowed to run"))
        started, line, finished = [await receive_json(ws) for _ in range(3)]
        assert (line["type"], line["status"], line["message"]) == (
            "run_update", "progress", "not running `click [2]`: denied by user (side panel)")
        assert (started["status"], finished["status"]) == ("started", "failed")

    with_panel(tmp_path, scenario)
