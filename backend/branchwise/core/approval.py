"""Who decides whether a destructive action may run during search.

Side-panel runs ask on a card in the side panel (safety/confirm.py); CLI runs ask there or in the terminal, or deny.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import sys
import threading
from dataclasses import dataclass, field
from typing import Literal, Protocol, TextIO

from ..actions import Action
from ..observation import PageView
from ..protocol import ElementRef, new_id
from .classes import Classification
from .requests import ExpectedRequest

log = logging.getLogger(__name__)


def new_nonce() -> str:
    return secrets.token_urlsafe(16)


@dataclass(frozen=True)
class ApprovalRequest:
    run_id: str
    action_text: str
    url: str
    element: str
    reasons: tuple[str, ...]
    # A flagged action before it runs, or a mutating request the network gate holds.
    kind: Literal["action", "request"] = "action"
    # What approving the action lets through the network gate, once each (what its form submits); empty when that
    # cannot be known before it runs (each request it makes is asked about then), and for a held request.
    sends: tuple[ExpectedRequest, ...] = ()
    # Where it shows (the working tab, the element in the page it shows now, to highlight) and the binding of this one
    # question, made when it is asked so the audit log has it before any answer. Not part of equality: two asks about
    # the same action on the same page are the same question.
    tab_id: int | None = field(default=None, compare=False)
    element_ref: ElementRef | None = field(default=None, compare=False)
    approval_id: str = field(default_factory=new_id, compare=False)
    nonce: str = field(default_factory=new_nonce, compare=False)


def covers(sends: tuple[ExpectedRequest, ...]) -> str:
    """What an approval of an action lets through the network gate, as the user is told."""
    if not sends:
        return ("what it sends is not known before it runs: each POST, PUT, DELETE or other mutating request it makes "
                "is asked about before it goes out")
    listed = " and ".join(f"one {r.describe()}" for r in sends)
    return f"approving lets {listed} through; anything else it sends is asked about"


def element_label(action: Action, page: PageView | None) -> str:
    """The element an action targets as the user sees it (role and name), read off the page it would run on."""
    element_id = action.element_id
    if element_id is None or page is None:
        return ""
    element = page.elements.get(element_id)
    return f"{element.role} '{element.name}'" if element else ""


def live_element_ref(action: Action, page: PageView | None, shown: PageView | None) -> ElementRef | None:
    """Where the element an action proposed on `page` is in `shown`, the page the tab shows now (a fresh capture of
    the same page may number its elements differently); None when it is not there."""
    element_id = action.element_id
    if element_id is None or page is None or shown is None or element_id not in page.elements:
        return None
    live_id = element_id if shown is page else shown.find(page.elements[element_id].locator)
    return shown.ref(live_id) if live_id is not None else None


def approval_request(run_id: str, action: Action, action_text: str, url: str, page: PageView | None,
                     classification: Classification, *, tab_id: int | None = None,
                     shown: PageView | None = None) -> ApprovalRequest:
    """What the user is asked about an action proposed on `page` (at `url`): its target and why it was flagged.
    `shown` is the page tab `tab_id` shows now, when that is `page`: its element gets highlighted."""
    return ApprovalRequest(run_id=run_id, action_text=action_text, url=url, element=element_label(action, page),
                           reasons=classification.reasons, sends=classification.sends, tab_id=tab_id,
                           element_ref=live_element_ref(action, page, shown))


DecisionOutcome = Literal["approved", "denied", "timeout"]


@dataclass(frozen=True)
class Decision:
    approved: bool
    by: str
    note: str = ""
    # Nobody answered in time: a denial, which the audit log records as such.
    timed_out: bool = False

    @property
    def outcome(self) -> DecisionOutcome:
        return "approved" if self.approved else "timeout" if self.timed_out else "denied"


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> Decision: ...


NOBODY_TO_ASK = "nobody can be asked: this run was started without a way to ask for approval"


class DenyApprover:
    """Refuses every destructive action: for runs where nobody can be asked (no terminal, `--confirm deny`, or an
    agent built without an approver)."""

    def __init__(self, why: str = NOBODY_TO_ASK) -> None:
        self.why = why

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(False, "policy", self.why)


class PolicyApprover:
    """Answers every question the same way, by a stated policy (`branchwise eval --approve all|none`), and keeps what
    it was asked, so an evaluation can report how many approvals its tasks needed."""

    def __init__(self, approve: bool, why: str) -> None:
        self.approve = approve
        self.why = why
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return Decision(self.approve, "policy", self.why)


class TerminalApprover:
    """Asks on the terminal; anything but an explicit yes is a no."""

    def __init__(self, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> None:
        self.stdin = stdin
        self.out = out
        self._answers = LineReader(stdin)

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.out.write(
            f"\nBranchwise wants to run a possibly destructive action:\n  {request.action_text}"
            f"{'  on ' + request.element if request.element else ''}\n  page: {request.url}\n"
            + "".join(f"  why flagged: {reason}\n" for reason in request.reasons)
            + (f"  {covers(request.sends)}\n" if request.kind == "action" else "")
            + "Allow it once? [y/N] "
        )
        self.out.flush()
        answer = await self._answers.line()
        approved = answer.strip().lower() in ("y", "yes")
        return Decision(approved, "user (terminal)", answer.strip())


class LineReader:
    """The answers typed on a terminal, one line per question, read on one daemon thread at a time.

    A daemon thread, so that a run stopped while a question waits (Ctrl-C, SIGTERM) lets the process exit, where
    asyncio.to_thread's worker would hold it until a line is typed. One read at a time, so that a question that timed
    out leaves no reader behind to take the next question's answer: the line being read answers whichever question
    waits when it comes, and one that comes while none waits (a late answer) is dropped, never kept for the next.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._waiting: tuple[asyncio.AbstractEventLoop, asyncio.Future[str]] | None = None
        self._reading = False

    async def line(self) -> str:
        """The next line typed (its newline kept; "" at end of input)."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        with self._lock:
            self._waiting = (loop, answer)
            start, self._reading = not self._reading, True
        if start:
            threading.Thread(target=self._read, name="terminal-answer", daemon=True).start()
        try:
            return await answer
        finally:
            with self._lock:
                if self._waiting is not None and self._waiting[1] is answer:
                    self._waiting = None

    def _read(self) -> None:
        try:
            text, error = self.stream.readline(), None
        except Exception as exc:  # handed to the question waiting
            text, error = "", exc
        with self._lock:
            self._reading = False
            waiting, self._waiting = self._waiting, None
        if waiting is None:
            log.warning("an answer came after its question had timed out: ignored")
            return
        loop, answer = waiting
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(_settle, answer, text, error)


def _settle(answer: asyncio.Future[str], text: str, error: BaseException | None) -> None:
    if answer.done():  # the question was cancelled as the line came
        return
    if error is not None:
        answer.set_exception(error)
    else:
        answer.set_result(text)


class ScriptedApprover:
    """For tests: answers in order, then denies."""

    def __init__(self, answers: list[bool]) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        approved = self.answers.pop(0) if self.answers else False
        return Decision(approved, "script")
