"""The network gate, backend side: a mutating request no approval covers is held in the browser until someone decides.

While a run works in a tab, the extension holds the tab's mutating requests (every method but GET, HEAD and OPTIONS; CDP
Fetch) and reports each as `request_held`. The gate asks the run's approver ("the page tried to send POST to …"), writes
the question and the outcome to the run's audit log, and answers `release_request`: the request goes out exactly once,
or fails and the server receives nothing. An approved action runs with an allowance (`act {allow}`) naming exactly what
the user approved, the request its form submits (method and URL): that one goes out once and comes back as
`request_sent`; anything else the action makes the page send is held and asked about like any other request ("the
approved action `click [13]` also tried to send it"). The classifier's misses are caught here, before they reach a
server.

Each action the environment runs is a window (BrowserEnv.watch): the requests seen in it, let through or failed, are
handed back with the action's result for the post-execution check (safety/postcheck.py). A window ends only once
every request held during it has been decided, so the check sees the whole picture.

A held request can still go out undecided: when the browser ends the extension's debugging session (the user cancels the
"is debugging this browser" bar), Chromium presumably lets the held requests go, as it does when the extension detaches
itself, and a block rule added while they are held does not stop them (docs/platform.md). The extension then reports
each as `request_sent {hold_id, detached}`: the question is withdrawn, the audit log says it went out and that nobody
decided it, and the action it belongs to learns it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..browser import BROWSER_FAILURES
from ..core.approval import ApprovalRequest, Approver, Decision
from ..core.requests import ActionWatch, ExpectedRequest, GatedOutcome, GatedRequest, WatchedEnv
from ..link import BrowserEvent
from ..protocol import ConfirmRequest, RequestHeld, RequestSent, TabEvent
from ..store import AuditRecord, RunWriter
from ..store.records import AuditKind
from .confirm import SidePanelApprover

log = logging.getLogger(__name__)

NO_APPROVAL = "no approval covers it"
ESCAPED = "went out undecided: the browser ended Branchwise's debugging session ({why}) while it was held"


class GateConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    decide_timeout_seconds: float = Field(default=140.0, gt=0, description="Unanswered this long: failed (timeout)")
    # The extension fails a hold on its own after this long (the backend is gone): longer than the decision may take.
    hold_timeout_seconds: float = Field(default=150.0, gt=0)


class GateBrowser(Protocol):
    """What the gate needs of the browser (browser.Browser)."""

    def on_event(self, listener: Callable[[BrowserEvent], None]) -> Callable[[], None]: ...

    def on_link(self, listener: Callable[[], Awaitable[None]]) -> Callable[[], None]: ...

    async def gate_tab(self, tab_id: int, on: bool, hold_timeout_seconds: float | None = None) -> None: ...

    async def release_request(self, hold_id: str, allow: bool) -> None: ...


class WatchedEnvSlot(WatchedEnv, Protocol):
    """An environment the gate can watch (agent/env.BrowserEnv)."""

    watch: ActionWatch | None


@dataclass(frozen=True)
class GateRun:
    """Who the gate works for: the run's id, where its audit log goes, and who decides for it."""

    run_id: str
    writer: RunWriter
    approver: Approver
    # A line into the run's log (the terminal, the side panel), for what the user must hear that no card shows: a
    # request that went out undecided takes its card away.
    say: Callable[[str], Awaitable[None]] | None = None


@dataclass
class _Window:
    action_text: str
    # None: nobody approved the action; else the user did, and these are what its approval lets through.
    approved: tuple[ExpectedRequest, ...] | None = None
    requests: list[GatedRequest] = field(default_factory=list)
    pending: set[asyncio.Task[None]] = field(default_factory=set)


@dataclass
class _Hold:
    """A held request, answered to the browser exactly once whatever happens while it is decided."""

    event: RequestHeld
    answered: bool = False
    # Why the browser let it go undecided (RequestSent.detached); empty while it is held or was answered. `let_go` is
    # set with it: the question waits for the user's answer or for the browser letting the request go, whichever
    # comes first.
    escaped: str = ""
    let_go: asyncio.Event = field(default_factory=asyncio.Event)


class GateSession:
    """One run under the gate: its tabs, the action running now, the holds being decided. The env's ActionWatch."""

    def __init__(self, gate: NetworkGate, run: GateRun) -> None:
        self.gate = gate
        self.run = run
        self.tabs: set[int] = set()
        # Tabs of the run whose gate the extension has not confirmed (asked and not answered, or refused): still the
        # run's (their holds are its own, and its end lifts their gates), gated again before an action runs there.
        self.unconfirmed: set[int] = set()
        self.window: _Window | None = None
        # Questions being decided, and audit rows being written (those are awaited, never cancelled).
        self.holds: set[asyncio.Task[None]] = set()
        self.writes: set[asyncio.Task[None]] = set()
        self.closed = False

    async def adopt(self, tab_id: int) -> None:
        """Gate the tab for the run. Claimed before the extension is asked (the tab's first hold can arrive before the
        answer) and kept claimed whatever the answer: a gate asked for may be on even when the answer never came, and
        the run's end lifts it. A failure is raised: no action runs in a tab whose gate is not confirmed."""
        if self.closed or (tab_id in self.tabs and tab_id not in self.unconfirmed):
            return
        self.gate.tab_sessions[tab_id] = self
        self.tabs.add(tab_id)
        await self.gate_on(tab_id)

    async def gate_on(self, tab_id: int) -> None:
        """Ask the extension to gate one of the run's tabs: unconfirmed until it answers."""
        self.unconfirmed.add(tab_id)
        await self.gate.browser.gate_tab(tab_id, True, self.gate.config.hold_timeout_seconds)
        self.unconfirmed.discard(tab_id)

    @contextlib.asynccontextmanager
    async def acting(self, env: WatchedEnv, action_text: str, approved: Sequence[ExpectedRequest] | None = None,
                     ) -> AsyncIterator[list[GatedRequest]]:
        # The working tab may have moved (tab_focus, close_tab); an action never runs in a tab that cannot be gated.
        await self.adopt(env.tab_id)
        window = _Window(action_text, tuple(approved) if approved is not None else None)
        self.window = window
        try:
            yield window.requests
            # The action returned: what it made the page send is known once every hold it raised is decided, those
            # reported while the first ones are decided included.
            while undecided := {task for task in window.pending if not task.done()}:
                await asyncio.wait(undecided)
        finally:
            if self.window is window:
                self.window = None
        try:
            await self.adopt(env.tab_id)  # e.g. new_tab: gate its page now, not only at the next action
        except BROWSER_FAILURES as exc:
            log.warning("network gate: tab %d not gated yet (tried again before the next action): %s", env.tab_id,
                        exc)

    async def close(self) -> None:
        """The run ends: questions still open are withdrawn (their requests failed), then the gate comes off the
        run's tabs (the extension fails anything they still hold first)."""
        self.closed = True
        for task in list(self.holds):
            task.cancel()
        if self.holds:
            await asyncio.wait(set(self.holds))
        for tab_id in sorted(self.tabs):
            if self.gate.tab_sessions.get(tab_id) is self:
                del self.gate.tab_sessions[tab_id]
            try:
                await self.gate.browser.gate_tab(tab_id, False)
            except BROWSER_FAILURES as exc:
                log.info("could not lift the network gate of tab %d: %s", tab_id, exc)
        if self.writes:
            await asyncio.wait(set(self.writes))


class NetworkGate:
    """One per backend (two would both answer a hold): routes the extension's gate events to the run whose tab they
    come from."""

    def __init__(self, browser: GateBrowser, config: GateConfig | None = None) -> None:
        self.browser = browser
        self.config = config or GateConfig()
        self.tab_sessions: dict[int, GateSession] = {}
        self.sessions: list[GateSession] = []
        # Holds no run claims, failed in the background: kept here so the loop does not drop their tasks half-way.
        self._unclaimed: set[asyncio.Task[None]] = set()
        # Every hold being decided, by its id: the browser may let it go meanwhile.
        self._deciding: dict[str, _Hold] = {}
        # Listening while no run is active too: a hold from a gate a previous backend left on (killed mid-run) is
        # failed at once and the gate lifted, instead of hanging until the extension's hold timeout.
        browser.on_event(self._on_event)
        browser.on_link(self._gate_again)
        # One question at a time: a terminal cannot ask two at once, and the user answers them in order anyway.
        self._asking = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def active(self, env: WatchedEnvSlot, run: GateRun) -> AsyncIterator[GateSession]:
        """The run works under the gate: its working tab (and the tabs it moves to or its pages open) are gated until
        the run ends."""
        session = GateSession(self, run)
        self.sessions.append(session)
        previous = env.watch
        try:
            await session.adopt(env.tab_id)
            env.watch = session
            yield session
        finally:
            env.watch = previous
            self.sessions.remove(session)
            await asyncio.shield(session.close())

    async def _gate_again(self) -> None:
        """A new connection of the extension: while this backend was away, a gate of a live run may have come off (a
        backend that connected in between lifts a gate no run of its own claims), so every tab a live run works in is
        gated again (a gate still on stays as it is). A tab whose gate is not confirmed stays the run's: its next
        action there gates it first, or does not run."""
        for session in list(self.sessions):
            for tab_id in sorted(session.tabs):
                if session.closed:
                    break
                try:
                    await session.gate_on(tab_id)
                except BROWSER_FAILURES as exc:
                    log.warning("network gate: tab %d not gated again after the extension reconnected: %s", tab_id,
                                exc)
                    continue
                if session.closed:  # its end's "off" may have been sent before this "on": the last word is "off"
                    with contextlib.suppress(*BROWSER_FAILURES):
                        await self.browser.gate_tab(tab_id, False)

    # Events ----------------------------------------------------------------------------------------------------------

    def _session_for(self, tab_id: int, opener_tab_id: int | None = None) -> GateSession | None:
        """The run a gated tab belongs to: the one that gated it, or the one whose tab's page opened it (named by the
        hold itself, which can arrive before the tab's `tab_event`). None for a tab no live run gated: a gate a
        backend before this one left on."""
        session = self.tab_sessions.get(tab_id)
        if session is None and opener_tab_id is not None:
            session = self.tab_sessions.get(opener_tab_id)
            if session is not None and not session.closed:
                session.tabs.add(tab_id)
                self.tab_sessions[tab_id] = session
        return session

    def _on_event(self, event: BrowserEvent) -> None:
        match event:
            case RequestHeld():
                session = self._session_for(event.tab_id, event.opener_tab_id)
                window = session.window if session is not None else None
                hold = _Hold(event)
                task = asyncio.ensure_future(self._decide(session, window, hold))
                tasks = session.holds if session is not None else self._unclaimed
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                self._deciding[event.hold_id] = hold
                task.add_done_callback(lambda _: self._deciding.pop(event.hold_id, None))
                if window is not None:
                    window.pending.add(task)
            case RequestSent(hold_id=str() as hold_id, detached=str() as why):
                self._escaped(event, hold_id, why)
            case RequestSent(hold_id=None) | RequestSent(redirected_from=str()):
                # A released request itself is recorded where it was decided (_decide_once); the rest is seen here.
                session = self._session_for(event.tab_id)
                if session is not None:
                    window = session.window
                    if window is not None:
                        outcome: GatedOutcome = "released" if event.hold_id is not None else "allowed"
                        window.requests.append(GatedRequest(event.method, event.url, outcome))
                    self._spawn(session, self._audit(session, "request_seen", event.method, event.url,
                                                     action_text=window.action_text if window else "",
                                                     note=_sent_note(event)))
            case TabEvent(event="created", opener_tab_id=opener) if opener is not None:
                session = self.tab_sessions.get(opener)
                if session is not None and not session.closed:
                    # The extension gates a tab a gated tab's page opens on its own, if the opener's gate is on and
                    # the gating works: the run's (lifted with it), gated again before an action runs there.
                    session.tabs.add(event.tab_id)
                    session.unconfirmed.add(event.tab_id)
                    self.tab_sessions[event.tab_id] = session

    def _escaped(self, event: RequestSent, hold_id: str, why: str) -> None:
        """The browser let a held request go as it ended the debugging session. The task deciding it records that:
        the open question is withdrawn (`_decide_once`), an answer on its way is refused by the browser (`_settle`),
        the run ending meanwhile fails nothing (`_withdrawn`). A hold no task decides is recorded here."""
        log.warning("network gate: %s %s of tab %d went out undecided: the browser ended the debugging session (%s)",
                    event.method, event.url, event.tab_id, why)
        hold = self._deciding.get(hold_id)
        if hold is not None:
            hold.escaped = why
            hold.let_go.set()
            return
        session = self._session_for(event.tab_id)
        if session is not None:
            self._spawn(session, self._went_out(session, event.method, event.url, why))

    def _spawn(self, session: GateSession, coro: Coroutine[object, object, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        session.writes.add(task)
        task.add_done_callback(session.writes.discard)
        return task

    # Deciding --------------------------------------------------------------------------------------------------------

    async def _decide(self, session: GateSession | None, window: _Window | None, hold: _Hold) -> None:
        held = hold.event
        try:
            await self._decide_once(session, window, hold)
        except Exception:  # fail safe: whatever broke, the request does not go out
            log.exception("network gate: deciding on %s %s failed; failing the request", held.method, held.url)
            if not hold.answered:
                await self._release(hold, False)

    async def _decide_once(self, session: GateSession | None, window: _Window | None, hold: _Hold) -> None:
        held = hold.event
        if session is None or session.closed:
            log.warning("network gate: %s %s from tab %d is held but no run is gated there: failing it", held.method,
                        held.url, held.tab_id)
            await self._release(hold, False)
            if session is None:
                await self._lift_stale(held.tab_id)
            return
        request = self._question(session.run, window, held)
        try:
            await self._audit(session, "request_held", held.method, held.url, action_text=window.action_text if window
                              else "", reasons=list(request.reasons), url=held.initiator_url or "",
                              note=f"{held.resource_type or 'request'}, {held.body_bytes} bytes of body",
                              approval_id=request.approval_id, nonce=request.nonce)
            decision = await self._unless_let_go(hold, self._ask(session.run.approver, request, held))
        except asyncio.CancelledError:
            # The run ended first: the request fails, unless the browser let it go already. Written by a task of the
            # run's own, so a second cancellation cannot lose the row (close() waits for it).
            release = None if hold.escaped else asyncio.ensure_future(self._release(hold, False))
            self._spawn(session, self._withdrawn(session, window, hold, request, release))
            if release is not None:
                await asyncio.shield(release)
            raise
        if decision is None:
            await asyncio.shield(self._spawn(session, self._withdrawn(session, window, hold, request, None)))
            return
        # Decided: the answer and its audit row are done whatever happens next (the run ending now cancels this task;
        # it waits for its writes, this one among them).
        await asyncio.shield(self._spawn(session, self._settle(session, window, hold, request, decision)))

    @staticmethod
    async def _unless_let_go(hold: _Hold, asking: Coroutine[object, object, Decision]) -> Decision | None:
        """The decision, or None when the browser let the request go first (the question is then withdrawn)."""
        if hold.let_go.is_set():
            asking.close()  # gone before anyone was asked
            return None
        question = asyncio.ensure_future(asking)
        let_go = asyncio.ensure_future(hold.let_go.wait())
        try:
            await asyncio.wait({question, let_go}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            let_go.cancel()
            if not question.done():
                question.cancel()
                await asyncio.wait({question})  # the approver closes its card
        if hold.escaped:
            if not question.cancelled():
                question.exception()  # an error deciding matters no more; read, so it is not reported as lost
            return None
        return question.result()

    async def _withdrawn(self, session: GateSession, window: _Window | None, hold: _Hold, request: ApprovalRequest,
                         release: asyncio.Future[str | None] | None) -> None:
        """The question ended undecided: the browser let the request go, or the run ended (`release` fails it; the
        browser may have let it go meanwhile, and then refuses the answer)."""
        held = hold.event
        if release is not None:
            await release
        if hold.escaped:
            if window is not None:
                window.requests.append(GatedRequest(held.method, held.url, "escaped"))
            await self._went_out(session, held.method, held.url, hold.escaped,
                                 action_text=window.action_text if window else "", approval_id=request.approval_id)
        else:
            await self._audit(session, "request_failed", held.method, held.url, decision="denied",
                              decided_by="policy", note="the run ended before anyone answered",
                              approval_id=request.approval_id)

    async def _settle(self, session: GateSession, window: _Window | None, hold: _Hold, request: ApprovalRequest,
                      decision: Decision) -> None:
        held = hold.event
        error = await self._release(hold, decision.approved)
        outcome: GatedOutcome = ("escaped" if hold.escaped else
                                 "released" if decision.approved and error is None else "failed")
        if window is not None:
            window.requests.append(GatedRequest(held.method, held.url, outcome))
        if hold.escaped:
            # The answer came after the browser had let it go: the log keeps both, the request went out anyway.
            error = ESCAPED.format(why=hold.escaped)
        note = decision.note if error is None else f"{decision.note + '; ' if decision.note else ''}{error}"
        # Nobody answered a timeout: the audit log names no one, as for actions (SearchTrace.decided).
        await self._audit(session, "request_failed" if outcome == "failed" else "request_released", held.method,
                          held.url, decision=decision.outcome, decided_by=None if decision.timed_out else decision.by,
                          note=note,
                          action_text=window.action_text if window else "", approval_id=request.approval_id)
        if hold.escaped:
            await self._tell(session, held.method, held.url, hold.escaped)

    async def _went_out(self, session: GateSession, method: str, url: str, why: str, *, action_text: str = "",
                        approval_id: str = "") -> None:
        """A request the browser let go that nobody had decided: on the audit log, decided by the browser."""
        await self._audit(session, "request_released", method, url, decided_by="browser",
                          note=ESCAPED.format(why=why), action_text=action_text, approval_id=approval_id)
        await self._tell(session, method, url, why)

    @staticmethod
    async def _tell(session: GateSession, method: str, url: str, why: str) -> None:
        if session.run.say is not None:
            await session.run.say(f"{method} {url} {ESCAPED.format(why=why)}")

    async def _lift_stale(self, tab_id: int) -> None:
        """Lift the gate of a tab no run of this backend holds: one left on by a backend that ended mid-run (killed,
        crashed), which would fail every post of the user's own tab until it is closed. Only while no run is active
        here: a run gates its tab after it is listed (`active`), so no gate of a starting run can be taken for one."""
        if self.sessions:
            return
        log.warning("network gate: tab %d was gated by no run of this backend (a previous one ended mid-run): "
                    "lifting it", tab_id)
        try:
            await self.browser.gate_tab(tab_id, False)
        except BROWSER_FAILURES as exc:
            log.info("could not lift the network gate of tab %d: %s", tab_id, exc)

    def _question(self, run: GateRun, window: _Window | None, held: RequestHeld) -> ApprovalRequest:
        return ApprovalRequest(
            run_id=run.run_id, action_text=f"the page tried to send {held.method} to {held.url}",
            url=held.initiator_url or "", element="", kind="request", tab_id=held.tab_id,
            reasons=(_when(window), NO_APPROVAL))

    async def _ask(self, approver: Approver, request: ApprovalRequest, held: RequestHeld) -> Decision:
        # The time waiting for an earlier question counts: the extension's hold timeout must not pass first.
        timeout = self.config.decide_timeout_seconds
        timed_out = Decision(False, "timeout", f"no answer within {timeout:g} s", timed_out=True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            async with asyncio.timeout_at(deadline):
                await self._asking.acquire()
        except TimeoutError:
            return timed_out
        try:
            left = deadline - loop.time()
            if left <= 0:
                return timed_out
            if isinstance(approver, SidePanelApprover):
                # The card shows it as what it is: a held request, with its method and address. It closes itself in
                # time, as a timeout the card shows.
                return await approver.confirm(ConfirmRequest(
                    run_id=request.run_id, approval_id=request.approval_id, nonce=request.nonce, kind="request",
                    tab_id=held.tab_id, action_text=request.action_text, url=request.url,
                    reasons=list(request.reasons), request_method=held.method, request_url=held.url,
                    timeout_s=min(approver.config.timeout_seconds, left)))
            return await asyncio.wait_for(approver.decide(request), left)
        except TimeoutError:
            return timed_out
        finally:
            self._asking.release()

    async def _release(self, hold: _Hold, allow: bool) -> str | None:
        """Answers the extension, once; the reason when the answer could not take effect."""
        held = hold.event
        if hold.escaped:
            return "the browser had let it go already"
        if hold.answered:
            log.error("network gate: %s %s was answered already; not answering again", held.method, held.url)
            return "answered already"
        hold.answered = True
        try:
            await self.browser.release_request(held.hold_id, allow)
        except BROWSER_FAILURES as exc:
            log.warning("network gate: could not %s %s %s: %s", "release" if allow else "fail", held.method,
                        held.url, exc)
            # Whatever went wrong, the request did not go out on our word: the extension fails what nobody answers.
            return f"the browser did not take the answer ({exc})"
        return None

    async def _audit(self, session: GateSession, kind: AuditKind, method: str, request_url: str,
                     **fields: object) -> None:
        record = AuditRecord(run_id=session.run.run_id, kind=kind, request_method=method, request_url=request_url,
                             **fields)  # type: ignore[arg-type]
        await session.run.writer.audit(record)


def _when(window: _Window | None) -> str:
    """Why a held request is asked about: when the page sent it, and what an approval running then covered."""
    if window is None:
        return "the page sent it while no action was running"
    if window.approved is None:
        return f"the page sent it while `{window.action_text}` ran"
    if window.approved:
        covered = " and ".join(r.describe() for r in window.approved)
        return f"the approved action `{window.action_text}` also tried to send it; the approval covers only {covered}"
    return (f"the approved action `{window.action_text}` tried to send it; what that action sends could not be known "
            "before it ran, so each request it makes is asked about")


def _sent_note(event: RequestSent) -> str:
    if event.redirected_from is not None:
        return f"let through: a redirect of {event.redirected_from}, which was let through"
    if event.allowed is not None:
        return f"let through once: the approval of the action covers {event.allowed.method} {event.allowed.url}"
    return "let through by the extension (it names no approval)"


def gate_run(gate: NetworkGate | None, env: WatchedEnvSlot,
             run: GateRun) -> contextlib.AbstractAsyncContextManager[GateSession | None]:
    """`async with gate_run(...)` around a run: under the gate when there is one, as before when not."""
    if gate is None:
        return contextlib.nullcontext()
    return gate.active(env, run)
