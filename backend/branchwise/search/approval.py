"""Who decides whether a destructive action may run during search.

Until the side panel can ask (the safety issue), CLI runs ask in the terminal and every other run is denied.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Protocol, TextIO

from ..actions import Action
from ..observation import PageView
from .classes import Classification


@dataclass(frozen=True)
class ApprovalRequest:
    run_id: str
    action_text: str
    url: str
    element: str
    reasons: tuple[str, ...]


def element_label(action: Action, page: PageView | None) -> str:
    """The element an action targets as the user sees it (role and name), read off the page it would run on."""
    element_id = action.element_id
    if element_id is None or page is None:
        return ""
    element = page.elements.get(element_id)
    return f"{element.role} '{element.name}'" if element else ""


def approval_request(run_id: str, action: Action, action_text: str, url: str, page: PageView | None,
                     classification: Classification) -> ApprovalRequest:
    """What the user is asked about an action proposed on `page` (at `url`): its target and why it was flagged."""
    return ApprovalRequest(run_id=run_id, action_text=action_text, url=url, element=element_label(action, page),
                           reasons=classification.reasons)


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
