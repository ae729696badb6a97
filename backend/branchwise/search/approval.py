"""Who decides whether a destructive action may run during search.

Until the side panel can ask (the safety issue), CLI runs ask in the terminal and every other run is denied.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Protocol, TextIO


@dataclass(frozen=True)
class ApprovalRequest:
    run_id: str
    action_text: str
    url: str
    element: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    approved: bool
    by: str
    note: str = ""


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> Decision: ...


class DenyApprover:
    def __init__(self, why: str = "nobody can be asked: confirmation in the side panel is not available yet") -> None:
        self.why = why

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(False, "policy", self.why)


class TerminalApprover:
    """Asks on the terminal; anything but an explicit yes is a no."""

    def __init__(self, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> None:
        self.stdin = stdin
        self.out = out

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.out.write(
            f"\nBranchwise wants to run a possibly destructive action:\n  {request.action_text}"
            f"{'  on ' + request.element if request.element else ''}\n  page: {request.url}\n"
            + "".join(f"  why flagged: {reason}\n" for reason in request.reasons)
            + "Allow it once? [y/N] "
        )
        self.out.flush()
        answer = await asyncio.to_thread(self.stdin.readline)
        approved = answer.strip().lower() in ("y", "yes")
        return Decision(approved, "user (terminal)", answer.strip())


class ScriptedApprover:
    """For tests: answers in order, then denies."""

    def __init__(self, answers: list[bool]) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        approved = self.answers.pop(0) if self.answers else False
        return Decision(approved, "script")
