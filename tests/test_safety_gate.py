"""The network gate, backend side, against a fake browser: held requests become questions, the answers go back to
the browser exactly once and into the audit log, and each action learns what it made the page send."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from branchwise.core.approval import ApprovalRequest, Decision, ScriptedApprover
from branchwise.core.requests import ActionWatch, ExpectedRequest, GatedRequest
from branchwise.link import BrowserEvent, ExtensionError
from branchwise.protocol import AllowedRequest, RequestHeld, RequestSent, TabEvent
from branchwise.safety.gate import GateConfig, GateRun, NetworkGate, gate_run
from branchwise.store import AuditRecord, RunRecord, RunStore, RunWriter

SHOP = "http://shop.test"


class FakeBrowser:
    """Stands in for Browser: records what the gate tells the extension, and lets the test play its events."""

    def __init__(self) -> None:
        self.listeners: list[Callable[[BrowserEvent], None]] = []
        self.link_listeners: list[Callable[[], Awaitable[None]]] = []
        self.gated: list[tuple[int, bool]] = []
        self.released: list[tuple[str, bool]] = []
        self.refuse_release = False
        # The browser ended the debugging session just before an answer came: the hold is reported let go, then the
        # answer refused.
        self.let_go_first = False
        self.closed_tabs: set[int] = set()

    def on_event(self, listener: Callable[[BrowserEvent], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def on_link(self, listener: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        self.link_listeners.append(listener)
        return lambda: self.link_listeners.remove(listener)

    async def gate_tab(self, tab_id: int, on: bool, hold_timeout_seconds: float | None = None) -> None:
        if tab_id in self.closed_tabs:
            raise ExtensionError("tab_closed", f"tab {tab_id} was closed")
        self.gated.append((tab_id, on))

    async def release_request(self, hold_id: str, allow: bool) -> None:
        self.released.append((hold_id, allow))
        if self.let_go_first:
            self.emit(let_go(hold_id))
        if self.refuse_release or self.let_go_first:
            raise ExtensionError("invalid_message", f"no request is held as {hold_id} (released, failed or timed out)")

    def emit(self, event: BrowserEvent) -> None:
        for listener in list(self.listeners):
            listener(event)


@dataclass
class Env:
    tab_id: int = 7
    watch: ActionWatch | None = None


@dataclass
class Harness:
    browser: FakeBrowser
    gate: NetworkGate
    store: RunStore
    run: GateRun
    env: Env = field(default_factory=Env)

    def audit(self) -> list[AuditRecord]:
        return self.store.audit_log("r1")


def held(hold_id: str = "h1", tab_id: int = 7, method: str = "POST", url: str = f"{SHOP}/buy") -> RequestHeld:
    return RequestHeld(tab_id=tab_id, hold_id=hold_id, method=method, url=url, resource_type="Fetch",
                       initiator_url=f"{SHOP}/product/3", body_bytes=12)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    store = RunStore.open(tmp_path / "runs.sqlite3")
    store.start_run(RunRecord(run_id="r1", task="buy nothing"))
    browser = FakeBrowser()
    yield Harness(browser, NetworkGate(browser), store, GateRun("r1", RunWriter(store, "r1"), ScriptedApprover([])))
    store.close()


def with_answers(h: Harness, answers: list[bool]) -> ScriptedApprover:
    approver = ScriptedApprover(answers)
    h.run = GateRun("r1", h.run.writer, approver)
    return approver


@dataclass
class SlowApprover:
    """Says yes after `seconds`."""

    seconds: float

    async def decide(self, request: ApprovalRequest) -> Decision:
        await asyncio.sleep(self.seconds)
        return Decision(True, "user")


async def until(condition: Callable[[], object], timeout: float = 5) -> None:
    """Lets the gate's tasks run (audit writes go through a thread) until `condition` holds."""
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def act(h: Harness, action_text: str, events: list[BrowserEvent],
              approved: tuple[ExpectedRequest, ...] | None = None, at_once: bool = False) -> list[GatedRequest]:
    """One action under the watch (`approved`: what the user approved with it, None: not approved): the events
    arrive while it runs (`at_once`: with no turn of the loop between them); returns what the action learns on exit."""
    assert h.env.watch is not None, "the gate is not active"
    async with h.env.watch.acting(h.env, action_text, approved) as seen:
        for event in events:
            h.browser.emit(event)
            if not at_once:
                await asyncio.sleep(0)
    return list(seen)


class Unanswered:
    """An approver whose user never answers: the question stays open until it is withdrawn."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")


def run_ends_with_a_question_open(h: Harness, hold_id: str) -> None:
    h.run = replace(h.run, approver=Unanswered())

    async def main() -> None:
        async with h.gate.active(h.env, h.run):
            h.browser.emit(held(hold_id))
            await until(lambda: h.audit())  # asked, not answered

    asyncio.run(asyncio.wait_for(main(), 10))


def test_a_denied_request_is_failed_once_and_audited(harness: Harness) -> None:
    h = harness
    approver = with_answers(h, [False])

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            assert h.env.watch is not None
            return await act(h, "click [12]", [held()])

    seen = asyncio.run(main())
    assert seen == [GatedRequest("POST", f"{SHOP}/buy", "failed")]
    assert h.browser.released == [("h1", False)]
    [question] = approver.requests
    assert question.action_text == f"the page tried to send POST to {SHOP}/buy"
    assert question.url == f"{SHOP}/product/3" and question.tab_id == 7
    assert question.reasons == ("the page sent it while `click [12]` ran", "no approval covers it")
    rows = h.audit()
    assert [(r.kind, r.request_method, r.request_url, r.action_text, r.decision, r.decided_by) for r in rows] == [
        ("request_held", "POST", f"{SHOP}/buy", "click [12]", None, None),
        ("request_failed", "POST", f"{SHOP}/buy", "click [12]", "denied", "script"),
    ]
    assert rows[0].reasons == list(question.reasons) and rows[0].approval_id == question.approval_id
    assert rows[0].note == "Fetch, 12 bytes of body" and rows[0].url == f"{SHOP}/product/3"
    # The gate went on the working tab for the run and came off after it; the env is unwatched again.
    assert h.browser.gated == [(7, True), (7, False)] and h.env.watch is None


def test_an_approved_request_is_released_exactly_once(harness: Harness) -> None:
    h = harness
    with_answers(h, [True, True])

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [12]", [held("h1")])

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "released")]
    assert h.browser.released == [("h1", True)]
    assert [(r.kind, r.decision, r.decided_by) for r in h.audit()] == [
        ("request_held", None, None), ("request_released", "approved", "script")]


def test_requests_an_approved_action_sent_are_seen_not_asked(harness: Harness) -> None:
    h = harness
    approver = with_answers(h, [])
    added = AllowedRequest(method="POST", url=f"{SHOP}/cart/add")

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [4]", [RequestSent(tab_id=7, method="POST", url=f"{SHOP}/cart/add",
                                                          allowed=added)],
                             approved=(ExpectedRequest("POST", f"{SHOP}/cart/add"),))

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/cart/add", "allowed")]
    assert approver.requests == [] and h.browser.released == []
    [row] = h.audit()
    assert (row.kind, row.action_text, row.request_method, row.request_url) == (
        "request_seen", "click [4]", "POST", f"{SHOP}/cart/add")


def test_an_approved_action_gets_what_its_approval_named_and_is_asked_about_anything_else(harness: Harness) -> None:
    """The piggyback: the user approved a POST form to /subscribe; the click also sends POST /buy, which the
    extension holds. The question says the approved action sent it and what the approval does cover."""
    h = harness
    approver = with_answers(h, [False])
    subscribe = f"{SHOP}/subscribe"
    allowed = AllowedRequest(method="POST", url=subscribe)

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [13]", [
                RequestSent(tab_id=7, method="POST", url=subscribe, allowed=allowed), held("h1")],
                approved=(ExpectedRequest("POST", subscribe),))

    assert asyncio.run(main()) == [GatedRequest("POST", subscribe, "allowed"),
                                   GatedRequest("POST", f"{SHOP}/buy", "failed")]
    [question] = approver.requests
    assert question.kind == "request" and question.sends == ()
    assert question.action_text == f"the page tried to send POST to {SHOP}/buy"
    assert question.reasons == (
        f"the approved action `click [13]` also tried to send it; the approval covers only POST to {subscribe}",
        "no approval covers it")
    assert h.browser.released == [("h1", False)]
    rows = {r.kind: r for r in h.audit()}
    assert rows["request_seen"].note == f"let through once: the approval of the action covers POST {subscribe}"
    assert rows["request_held"].reasons == list(question.reasons)


def test_an_approved_action_whose_requests_were_not_known_has_each_one_asked_about(harness: Harness) -> None:
    h = harness
    approver = with_answers(h, [True])

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [4]", [held("h1")], approved=())

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "released")]
    assert approver.requests[0].reasons == (
        "the approved action `click [4]` tried to send it; what that action sends could not be known before it ran, "
        "so each request it makes is asked about", "no approval covers it")


def test_a_redirect_of_a_released_request_is_seen_as_released(harness: Harness) -> None:
    h = harness
    with_answers(h, [])
    moved = RequestSent(tab_id=7, method="POST", url=f"{SHOP}/buy?moved=1", hold_id="h1",
                        redirected_from=f"{SHOP}/moved")

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            # The release itself was recorded where it was decided; its own request_sent adds nothing.
            return await act(h, "click [4]", [RequestSent(tab_id=7, method="POST", url=f"{SHOP}/moved",
                                                          hold_id="h1"), moved])

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy?moved=1", "released")]
    [row] = h.audit()
    assert (row.kind, row.note) == ("request_seen", f"let through: a redirect of {SHOP}/moved, which was let through")


def test_a_request_between_actions_is_asked_about_too(harness: Harness) -> None:
    h = harness
    approver = with_answers(h, [False])

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            h.browser.emit(held("h9", method="DELETE", url=f"{SHOP}/cart/3"))
            await until(lambda: h.browser.released)
            # It belongs to no action: the next one does not count it.
            return await act(h, "scroll [down]", [])

    assert asyncio.run(main()) == []
    assert approver.requests[0].reasons == ("the page sent it while no action was running", "no approval covers it")
    assert h.browser.released == [("h9", False)]
    assert [r.kind for r in h.audit()] == ["request_held", "request_failed"]


def test_a_run_ending_just_after_a_request_was_decided_keeps_the_decision_in_its_audit_log(harness: Harness) -> None:
    """The run ends (its gate session closes, cancelling the questions still open) while the audit row of a request
    already answered is being written: the row is written all the same."""
    h = harness
    with_answers(h, [False])
    audit = h.gate._audit

    async def slow_audit(session: Any, kind: Any, method: str, request_url: str, **fields: object) -> None:
        if kind == "request_failed":
            await asyncio.sleep(0.2)  # a busy disk
        await audit(session, kind, method, request_url, **fields)

    h.gate._audit = slow_audit  # type: ignore[method-assign]

    async def main() -> None:
        async with h.gate.active(h.env, h.run):
            h.browser.emit(held("h11", method="DELETE", url=f"{SHOP}/cart/3"))
            await until(lambda: h.browser.released)

    asyncio.run(main())
    assert [(r.kind, r.decision) for r in h.audit()] == [("request_held", None), ("request_failed", "denied")]


def test_tabs_the_run_moves_to_or_its_pages_open_are_gated_and_released_with_it(harness: Harness) -> None:
    h = harness
    with_answers(h, [False])

    async def main() -> None:
        async with h.gate.active(h.env, h.run):
            h.browser.emit(TabEvent(tab_id=8, event="created", opener_tab_id=7))
            h.env.tab_id = 9  # e.g. tab_focus: the next action runs there
            await act(h, "click [1]", [held("h2", tab_id=8)])
            assert h.env.watch is not None
            await h.env.watch.adopt(10)  # a committed speculative tab

    asyncio.run(main())
    assert h.browser.gated[:3] == [(7, True), (9, True), (10, True)]
    # The extension gated the opened tab itself; the run lifts the gate of every tab it had.
    assert sorted(h.browser.gated[3:]) == [(7, False), (8, False), (9, False), (10, False)]
    assert h.browser.released == [("h2", False)]


def test_a_question_still_open_when_the_run_ends_fails_its_request(harness: Harness) -> None:
    h = harness
    run_ends_with_a_question_open(h, "h3")
    assert h.browser.released == [("h3", False)]
    assert h.browser.gated == [(7, True), (7, False)]
    rows = h.audit()
    assert [(r.kind, r.decision, r.note) for r in rows] == [
        ("request_held", None, "Fetch, 12 bytes of body"),
        ("request_failed", "denied", "the run ended before anyone answered")]


def test_an_unanswered_question_times_out_and_fails(harness: Harness) -> None:
    h = harness

    h.browser = FakeBrowser()  # one gate per browser: the harness's own would answer its holds too
    h.gate = NetworkGate(h.browser, GateConfig(decide_timeout_seconds=0.05))
    h.run = GateRun("r1", h.run.writer, SlowApprover(10))

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [2]", [held("h4")])

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "failed")]
    assert h.browser.released == [("h4", False)]
    assert [(r.kind, r.decision, r.decided_by) for r in h.audit()][-1] == ("request_failed", "timeout", None)


def test_an_approval_the_browser_could_not_carry_out_is_recorded_as_failed(harness: Harness) -> None:
    h = harness
    with_answers(h, [True])
    h.browser.refuse_release = True  # e.g. the extension already failed it after its hold timeout

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [2]", [held("h5")])

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "failed")]
    last = h.audit()[-1]
    assert (last.kind, last.decision) == ("request_failed", "approved")
    assert "the browser did not take the answer" in last.note


LET_GO_LINE = (f"POST {SHOP}/buy went out undecided: the browser ended Branchwise's debugging session "
               "(canceled_by_user) while it was held")


def told(h: Harness) -> list[str]:
    """The lines the gate says into the run's log (the terminal, the side panel)."""
    said: list[str] = []

    async def say(line: str) -> None:
        said.append(line)

    h.run = replace(h.run, say=say)
    return said


def let_go(hold_id: str, why: str = "canceled_by_user") -> RequestSent:
    """What the extension reports when the browser ended its debugging session while `hold_id` was held."""
    return RequestSent(tab_id=7, method="POST", url=f"{SHOP}/buy", hold_id=hold_id, detached=why)


def test_a_request_the_browser_let_go_while_it_was_asked_about_is_recorded_as_sent_undecided(harness: Harness) -> None:
    """The user cancelled the "is debugging this browser" bar while a purchase was held: Chromium let it go. The
    question is withdrawn (there is nothing left to decide), nothing is answered to the browser, the audit log says it
    went out and that nobody decided it, and the action learns it sent something."""
    h = harness
    approver = Unanswered()
    h.run = GateRun("r1", h.run.writer, approver)
    said = told(h)

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            assert h.env.watch is not None
            async with h.env.watch.acting(h.env, "click [12]") as seen:
                h.browser.emit(held("h9"))
                await asyncio.wait_for(approver.asked.wait(), 5)
                h.browser.emit(let_go("h9"))
            return list(seen)

    seen = asyncio.run(asyncio.wait_for(main(), 10))
    assert seen == [GatedRequest("POST", f"{SHOP}/buy", "escaped")] and seen[0].sent
    assert h.browser.released == []
    rows = h.audit()
    assert [(r.kind, r.decision, r.decided_by, r.action_text) for r in rows] == [
        ("request_held", None, None, "click [12]"), ("request_released", None, "browser", "click [12]")]
    assert rows[1].note == ("went out undecided: the browser ended Branchwise's debugging session (canceled_by_user) "
                            "while it was held")
    assert rows[1].approval_id == rows[0].approval_id
    # Its card went away unanswered: the run's log says why.
    assert said == [LET_GO_LINE]


def test_a_denial_that_reaches_the_browser_after_it_let_the_request_go_is_not_recorded_as_refused(
        harness: Harness) -> None:
    """The user said no just as the browser ended the debugging session: the extension reports the request let go,
    then refuses the answer (it holds nothing any more). The log must not say the request was refused."""
    h = harness
    with_answers(h, [False])
    said = told(h)
    h.browser.let_go_first = True

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [12]", [held("h10")])

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "escaped")]
    assert said == [LET_GO_LINE]
    last = h.audit()[-1]
    assert (last.kind, last.decision, last.decided_by) == ("request_released", "denied", "script")
    assert "went out undecided: the browser ended Branchwise's debugging session (canceled_by_user)" in last.note


def test_a_request_let_go_in_the_same_moment_it_was_held_is_recorded_and_nobody_is_asked(harness: Harness) -> None:
    """Both reports can reach the gate before its task for the hold has run at all."""
    h = harness
    approver = with_answers(h, [False])
    said = told(h)

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [12]", [held("h12"), let_go("h12")], at_once=True)

    assert asyncio.run(asyncio.wait_for(main(), 10)) == [GatedRequest("POST", f"{SHOP}/buy", "escaped")]
    assert approver.requests == [] and h.browser.released == []
    assert [(r.kind, r.decided_by) for r in h.audit()] == [("request_held", None), ("request_released", "browser")]
    assert said == [LET_GO_LINE]


def test_a_request_let_go_as_the_run_ends_is_not_recorded_as_refused(harness: Harness) -> None:
    """The run ends with the question open and the request is failed, but the browser had just let it go: the
    extension refuses the failing, and the log says the request went out."""
    h = harness
    h.browser.let_go_first = True
    said = told(h)
    run_ends_with_a_question_open(h, "h13")
    assert h.browser.released == [("h13", False)]
    rows = h.audit()
    assert [(r.kind, r.decided_by) for r in rows] == [("request_held", None), ("request_released", "browser")]
    assert rows[1].note.startswith("went out undecided") and said == [LET_GO_LINE]


def test_a_request_let_go_that_no_question_was_open_for_is_still_logged(harness: Harness) -> None:
    """Its `request_held` was lost on the way (or it was already settled): the run's audit log still says it went
    out."""
    h = harness
    said = told(h)

    async def main() -> None:
        async with h.gate.active(h.env, h.run):
            h.browser.emit(let_go("h11"))
            await until(lambda: said)

    asyncio.run(main())
    [row] = h.audit()
    assert (row.kind, row.request_method, row.request_url, row.decided_by) == (
        "request_released", "POST", f"{SHOP}/buy", "browser")
    assert "(canceled_by_user)" in row.note and said == [LET_GO_LINE]


def test_a_hold_from_a_gate_a_previous_backend_left_is_failed_at_once_and_the_gate_lifted() -> None:
    browser = FakeBrowser()
    NetworkGate(browser)

    async def main() -> None:
        # No run is active: the tab was gated by a backend killed mid-run. Its first post fails (nobody can be asked),
        # and the user's tab posts again after it.
        browser.emit(held("h6", tab_id=99))
        await until(lambda: browser.gated)

    asyncio.run(main())
    assert browser.released == [("h6", False)] and browser.gated == [(99, False)]


def test_a_hold_no_run_claims_while_runs_are_active_is_failed_and_no_gate_is_lifted(tmp_path: Path) -> None:
    browser = FakeBrowser()
    gate = NetworkGate(browser)

    async def main() -> None:
        with RunStore(tmp_path / "runs.sqlite3") as store:
            runs = [GateRun(run_id, RunWriter(store, run_id), ScriptedApprover([])) for run_id in ("r1", "r2")]
            async with gate.active(Env(tab_id=7), runs[0]), gate.active(Env(tab_id=8), runs[1]):
                browser.emit(held("h7", tab_id=99))
                await until(lambda: browser.released)
                await asyncio.sleep(0.05)
                assert browser.gated == [(7, True), (8, True)], "a gate is lifted only when no run could own it"

    asyncio.run(main())
    assert browser.released == [("h7", False)]


def test_when_the_extension_connects_again_every_tab_of_a_live_run_is_gated_again(harness: Harness) -> None:
    """A backend that connected in between may have lifted the gate: it is put back. A tab whose gate cannot be
    confirmed (closed meanwhile, or no answer in time: it may be on) stays the run's, and its next action there gates
    it first or does not run."""
    h = harness

    async def main() -> None:
        async with h.gate.active(h.env, h.run) as session:
            await session.adopt(8)
            h.browser.closed_tabs.add(8)
            for listener in h.browser.link_listeners:
                await listener()
            assert session.tabs == {7, 8} and session.unconfirmed == {8} and h.gate.tab_sessions[8] is session
            with pytest.raises(ExtensionError, match="tab 8 was closed"):
                await session.adopt(8)
        for listener in h.browser.link_listeners:
            await listener()  # no run is live: nothing to gate

    asyncio.run(main())
    assert h.browser.gated == [(7, True), (8, True), (7, True), (7, False)]


def test_an_action_in_a_tab_the_runs_page_opened_gates_it_first(harness: Harness) -> None:
    """The extension gates a tab a gated tab's page opens on its own, but only if the opener's gate is on: here the
    opener's gate could not be put back after a reconnect (another debugger took the tab). The run moving to the
    opened tab gates it before acting there."""
    h = harness
    with_answers(h, [])
    gate_tab = h.browser.gate_tab

    async def refused_for_7_again(tab_id: int, on: bool, hold_timeout_seconds: float | None = None) -> None:
        if on and tab_id == 7 and (7, True) in h.browser.gated:
            raise ExtensionError("cdp_error", "another debugger is attached to tab 7")
        await gate_tab(tab_id, on, hold_timeout_seconds)

    h.browser.gate_tab = refused_for_7_again  # type: ignore[method-assign]

    async def main() -> None:
        async with h.gate.active(h.env, h.run):
            for listener in h.browser.link_listeners:
                await listener()
            h.browser.emit(TabEvent(tab_id=8, event="created", opener_tab_id=7))
            h.env.tab_id = 8  # tab_focus
            assert h.env.watch is not None
            async with h.env.watch.acting(h.env, "click [1]"):
                acted_after.extend(h.browser.gated)

    acted_after: list[tuple[int, bool]] = []
    asyncio.run(main())
    assert acted_after == [(7, True), (8, True)], "tab 8 gated before the click runs there"
    assert h.browser.gated == [(7, True), (8, True), (7, False), (8, False)]


def test_a_tab_whose_gate_was_asked_for_is_lifted_at_the_runs_end_even_if_no_answer_came(harness: Harness) -> None:
    """The run ends (Stop) while the extension is being asked to gate a tab it moved to: the gate may be on by then,
    so the run's end lifts it; and a hold from that tab meanwhile is the run's, asked about, not taken for a stale
    gate's."""
    h = harness
    approver = ScriptedApprover([False])
    run = GateRun("r1", RunWriter(h.store, "r1"), approver)
    gate_tab = h.browser.gate_tab

    async def slow_to_answer(tab_id: int, on: bool, hold_timeout_seconds: float | None = None) -> None:
        await gate_tab(tab_id, on, hold_timeout_seconds)
        if on and tab_id == 11:
            h.browser.emit(held("h12", tab_id=11))
            await asyncio.sleep(30)

    h.browser.gate_tab = slow_to_answer  # type: ignore[method-assign]

    async def main() -> None:
        async with h.gate.active(h.env, run) as session:
            adopting = asyncio.ensure_future(session.adopt(11))
            await until(lambda: h.browser.released)
            adopting.cancel()

    asyncio.run(main())
    assert len(approver.requests) == 1 and h.browser.released == [("h12", False)]
    assert h.browser.gated == [(7, True), (11, True), (7, False), (11, False)]


def test_with_one_run_live_a_hold_is_its_own_only_from_its_tabs_and_the_tabs_their_pages_opened(
        harness: Harness) -> None:
    """A hold from a tab the run's page opened names its opener (it can arrive before the tab's `tab_event`) and is
    asked about in that run; a hold from a tab a backend before this one left gated is failed, not asked about in the
    one live run, and its gate is left for when no run could own it."""
    h = harness
    approver = ScriptedApprover([False, False])
    run = GateRun("r1", RunWriter(h.store, "r1"), approver)

    async def main() -> None:
        async with h.gate.active(h.env, run):
            h.browser.emit(held("h8", tab_id=99))
            await until(lambda: ("h8", False) in h.browser.released)
            h.browser.emit(RequestHeld(tab_id=12, hold_id="h9", method="POST", url=f"{SHOP}/buy", opener_tab_id=7))
            await until(lambda: ("h9", False) in h.browser.released)

    asyncio.run(main())
    assert [r.action_text for r in approver.requests] == [f"the page tried to send POST to {SHOP}/buy"]
    assert h.browser.gated == [(7, True), (7, False), (12, False)], "the opened tab's gate goes with the run"


def test_a_hold_that_arrives_before_the_extension_answers_gate_tab_is_the_runs(harness: Harness) -> None:
    h = harness
    approver = ScriptedApprover([False])
    run = GateRun("r1", RunWriter(h.store, "r1"), approver)
    gate_tab = h.browser.gate_tab

    async def answers_after_a_hold(tab_id: int, on: bool, hold_timeout_seconds: float | None = None) -> None:
        if on:
            h.browser.emit(held("h10", tab_id=tab_id))
            await asyncio.sleep(0.05)
        await gate_tab(tab_id, on, hold_timeout_seconds)

    h.browser.gate_tab = answers_after_a_hold  # type: ignore[method-assign]

    async def main() -> None:
        async with h.gate.active(h.env, run):
            await until(lambda: h.browser.released)

    asyncio.run(main())
    assert len(approver.requests) == 1 and h.browser.released == [("h10", False)]
    assert h.browser.gated == [(7, True), (7, False)], "the run's gate was not taken for a stale one and lifted"


def test_without_a_gate_the_run_is_unwatched() -> None:
    env = Env()

    async def main() -> None:
        async with gate_run(None, env, GateRun("r1", RunWriter(None, "r1"), ScriptedApprover([]))) as session:
            assert session is None and env.watch is None

    asyncio.run(main())


def test_through_the_side_panel_a_held_request_is_a_request_card(tmp_path: Path) -> None:
    """Over a real WebSocket, a Python client playing the extension: gate_tab, request_held, the side panel card
    (kind request, with method and address), the user's answer, then release_request."""
    import json

    from branchwise.browser import Browser
    from branchwise.safety.confirm import ConfirmConfig, SidePanelApprover

    from extension_client import paired_socket, receive_json, running_backend

    async def reply_done(ws: Any, message: dict[str, Any]) -> None:
        await ws.send(json.dumps({"type": "done", "id": f"d-{message['id']}", "reply_to": message["id"]}))

    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            approver = SidePanelApprover(backend.hub, ConfirmConfig(timeout_seconds=10))
            gate = NetworkGate(Browser(backend.hub))
            env = Env(tab_id=31)
            run = GateRun("r9", RunWriter(None, "r9"), approver)
            seen: list[dict[str, Any]] = []
            try:
                async def extension() -> None:
                    gate_on = await receive_json(ws)
                    await reply_done(ws, gate_on)
                    await ws.send(json.dumps({"type": "request_held", "id": "e1", "tab_id": 31, "hold_id": "h7",
                                              "method": "DELETE", "url": f"{SHOP}/account", "resource_type": "XHR",
                                              "body_bytes": 0}))
                    card = await receive_json(ws)
                    seen.extend([gate_on, card])
                    await ws.send(json.dumps({"type": "confirm_answer", "id": "e2", "approval_id": card["approval_id"],
                                              "nonce": card["nonce"], "approved": False}))
                    while True:
                        message = await receive_json(ws)
                        seen.append(message)
                        if message["type"] in ("release_request", "gate_tab"):
                            await reply_done(ws, message)
                        if message["type"] == "gate_tab":
                            return

                client = asyncio.ensure_future(extension())
                async with gate.active(env, run):
                    await until(lambda: any(m["type"] == "release_request" for m in seen), 10)
                await client
            finally:
                approver.close()
                await ws.close()
        check(seen)

    def check(seen: list[dict[str, Any]]) -> None:
        gate_on, card = seen[0], seen[1]
        assert (gate_on["type"], gate_on["tab_id"], gate_on["on"]) == ("gate_tab", 31, True)
        assert (card["type"], card["kind"], card["request_method"], card["request_url"], card["tab_id"]) == (
            "confirm_request", "request", "DELETE", f"{SHOP}/account", 31)
        assert card["action_text"] == f"the page tried to send DELETE to {SHOP}/account"
        assert card["reasons"] == ["the page sent it while no action was running", "no approval covers it"]
        rest = [(m["type"], m.get("hold_id"), m.get("allow"), m.get("outcome"), m.get("on")) for m in seen[2:]]
        assert ("confirm_closed", None, None, "denied", None) in rest
        assert ("release_request", "h7", False, None, None) in rest
        assert rest[-1] == ("gate_tab", None, None, None, False)

    asyncio.run(asyncio.wait_for(main(), 30))


def test_over_a_real_socket_a_reconnected_extension_is_told_to_gate_the_live_runs_tab_again(tmp_path: Path) -> None:
    """A Python client playing the extension connects, is told to gate tab 31, drops the connection and connects
    again: the backend gates tab 31 again on the new connection, and lifts it there when the run ends."""
    import json

    from branchwise.browser import Browser

    from extension_client import paired_socket, receive_json, running_backend

    async def answer_gate(ws: Any) -> dict[str, Any]:
        message = await receive_json(ws)
        assert message["type"] == "gate_tab", message
        await ws.send(json.dumps({"type": "done", "id": f"d-{message['id']}", "reply_to": message["id"]}))
        return message

    async def main() -> list[tuple[int, bool]]:
        async with running_backend(tmp_path) as backend:
            gate = NetworkGate(Browser(backend.hub))
            first = await paired_socket(backend)
            seen: list[tuple[int, bool]] = []
            async with contextlib.AsyncExitStack() as stack:
                entering = asyncio.ensure_future(stack.enter_async_context(
                    gate.active(Env(tab_id=31), GateRun("r9", RunWriter(None, "r9"), ScriptedApprover([])))))
                message = await answer_gate(first)
                await entering
                seen.append((message["tab_id"], message["on"]))
                await first.close()
                second = await paired_socket(backend)
                message = await answer_gate(second)
                seen.append((message["tab_id"], message["on"]))
                leaving = asyncio.ensure_future(stack.aclose())
                message = await answer_gate(second)
                await leaving
                seen.append((message["tab_id"], message["on"]))
                await second.close()
            return seen

    assert asyncio.run(asyncio.wait_for(main(), 30)) == [(31, True), (31, True), (31, False)]


def test_a_greedy_run_works_under_the_gate_and_asks_its_approver(tmp_path: Path) -> None:
    """Greedy has no classifier: under the gate, every mutating request of its run is held and asked about."""
    from branchwise.actions import Action
    from branchwise.agent.env import EnvView, ExecResult
    from branchwise.agent.reporting import Reporters

    from agents import greedy_agent
    from fake_models import FakeModel

    browser = FakeBrowser()
    approver = ScriptedApprover([False])

    @dataclass
    class PostingEnv:
        """Clicking [3] makes the page POST; the gate holds it."""

        tab_id: int = 5
        watch: object = None
        last: EnvView | None = None

        async def observe(self) -> EnvView:
            return EnvView(text="Tab 0 (current): Shop\nURL: http://shop.test/\n\n[3] button 'Subscribe'",
                           url=f"{SHOP}/", title="Shop", tab_id=self.tab_id, raw_node_count=2)

        async def execute(self, action: Action, *, allow: object = None) -> ExecResult:
            browser.emit(held("g1", tab_id=5, url=f"{SHOP}/subscribe"))
            await until(lambda: browser.released)
            return ExecResult(True)

    replies = iter(["In summary, the next action I will perform is ```click [3]```",
                    "In summary, the next action I will perform is ```stop [done]```"])
    model = FakeModel(lambda call: next(replies))
    agent = greedy_agent(model, gate=NetworkGate(browser), approver=approver)
    env = PostingEnv()

    result = asyncio.run(agent.run("subscribe", env, Reporters(), run_id="g"))  # type: ignore[arg-type]
    assert result.status == "finished"
    assert [r.action_text for r in approver.requests] == [f"the page tried to send POST to {SHOP}/subscribe"]
    assert browser.released == [("g1", False)]
    assert browser.gated == [(5, True), (5, False)] and env.watch is None


def test_a_hold_reported_while_the_first_is_decided_still_belongs_to_the_action(harness: Harness) -> None:
    h = harness

    class SecondArrivesMeanwhile:
        """While the first request is asked about, the page sends a second one."""

        def __init__(self) -> None:
            self.asked = 0

        async def decide(self, request: ApprovalRequest) -> Decision:
            self.asked += 1
            if self.asked == 1:
                h.browser.emit(held("h12", url=f"{SHOP}/track"))
            return Decision(False, "script")

    h.run = GateRun("r1", h.run.writer, SecondArrivesMeanwhile())

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [2]", [held("h11")])

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "failed"),
                                   GatedRequest("POST", f"{SHOP}/track", "failed")]
    assert h.browser.released == [("h11", False), ("h12", False)]


def test_a_request_is_answered_once_even_when_recording_the_answer_breaks(harness: Harness,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness
    with_answers(h, [True])
    audit = h.gate._audit

    async def breaks_after_the_answer(session: Any, kind: Any, *args: Any, **fields: Any) -> None:
        if kind == "request_released":
            raise RuntimeError("the log broke")
        await audit(session, kind, *args, **fields)

    monkeypatch.setattr(h.gate, "_audit", breaks_after_the_answer)

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [2]", [held("h13")])

    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "released")]
    assert h.browser.released == [("h13", True)]


def test_waiting_behind_another_question_counts_toward_the_decide_timeout(harness: Harness) -> None:
    h = harness

    h.browser = FakeBrowser()  # one gate per browser: the harness's own would answer its holds too
    h.gate = NetworkGate(h.browser, GateConfig(decide_timeout_seconds=0.6))
    h.run = GateRun("r1", h.run.writer, SlowApprover(0.4))

    async def main() -> list[GatedRequest]:
        async with h.gate.active(h.env, h.run):
            return await act(h, "click [2]", [held("h14"), held("h15", url=f"{SHOP}/pay")])

    # The second question starts 0.4 s late and has only the rest of its 0.6 s: the hold fails before the
    # extension's own hold timeout could. (0.2 s of slack either way: with 0.1 s it failed once on a busy machine.)
    assert asyncio.run(main()) == [GatedRequest("POST", f"{SHOP}/buy", "released"),
                                   GatedRequest("POST", f"{SHOP}/pay", "failed")]
    assert h.browser.released == [("h14", True), ("h15", False)]
    assert [(r.kind, r.decision) for r in h.audit() if r.kind != "request_held"] == [
        ("request_released", "approved"), ("request_failed", "timeout")]
