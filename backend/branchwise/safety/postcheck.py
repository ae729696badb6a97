"""After an action ran: do the requests it really sent confirm the class it was given before it ran?

The network gate reports every mutating request (any method but GET, HEAD and OPTIONS) the page made while the action
ran, and whether it went out. Compared with the classifier's verdict:

- destructive, and something went out: **confirmed**;
- destructive, nothing went out: **refuted**, yet still treated as destructive (see `post_check`);
- safe or navigation, yet something went out (possible only when the user released it at the gate,
  or the browser let a held request go as it ended the debugging session): **contradicted**,
  the class was wrong and the action is treated as destructive from now on: it changed the site;
- safe or navigation, and the page tried but the gate failed every request: **contradicted** as well, but nothing
  reached a server, so the class search acts on stays;
- safe or navigation, nothing tried: **agrees** (nothing to record);
- no gate watched the action: **unchecked** (no evidence either way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..core.classes import ActionClass
from ..core.requests import GatedRequest

Verdict = Literal["confirmed", "refuted", "contradicted", "agrees", "unchecked"]


@dataclass(frozen=True)
class PostCheck:
    verdict: Verdict
    # What the classifier said before the action ran, and what search treats the action as now.
    action_class: ActionClass
    effective_class: ActionClass
    sent: tuple[GatedRequest, ...] = ()
    refused: tuple[GatedRequest, ...] = ()
    note: str = ""

    @property
    def recorded(self) -> bool:
        """Worth an audit row: the evidence says something about the class."""
        return self.verdict not in ("agrees", "unchecked")

    def reroots(self, ran_ok: bool) -> bool:
        """Whether search must treat the action's result as the new root (no way back across a change to the site):
        a destructive action that ran, or any action that got a mutating request out, even if it then failed."""
        return bool(self.sent) or (self.effective_class is ActionClass.DESTRUCTIVE and ran_ok)


def _listed(requests: Sequence[GatedRequest]) -> str:
    return "; ".join(r.describe() for r in requests)


def post_check(action_class: ActionClass, requests: Sequence[GatedRequest] | None) -> PostCheck:
    """`requests`: what the network gate saw while the action ran (ExecResult.requests), None when none watched."""
    if requests is None:
        return PostCheck("unchecked", action_class, action_class)
    sent = tuple(r for r in requests if r.sent)
    refused = tuple(r for r in requests if not r.sent)
    if action_class is ActionClass.TERMINATING:  # never executed
        return PostCheck("agrees", action_class, action_class, sent, refused)
    if action_class is ActionClass.DESTRUCTIVE:
        if sent:
            return PostCheck("confirmed", action_class, action_class, sent, refused, f"it sent {_listed(sent)}")
        # Kept destructive: the gate sees only the tab's own HTTP requests. A message on an open WebSocket, a request
        # handed to a worker shared with other tabs, or a GET with side effects (/logout, /delete?id=3) can change the
        # site unseen, so "nothing seen" does not prove "nothing changed"; wrongly re-rooting costs only the old
        # branches, wrongly replaying across a real change can repeat it.
        tried = f" (the page tried {_listed(refused)})" if refused else ""
        return PostCheck("refuted", action_class, action_class, sent, refused,
                         f"no mutating request went out{tried}; still treated as destructive")
    if sent:
        return PostCheck("contradicted", action_class, ActionClass.DESTRUCTIVE, sent, refused,
                         f"classified {action_class.value}, yet it sent {_listed(sent)}: treated as destructive")
    if refused:
        return PostCheck("contradicted", action_class, action_class, sent, refused,
                         f"classified {action_class.value}, yet the page tried {_listed(refused)}; nothing went out, "
                         "so nothing changed")
    return PostCheck("agrees", action_class, action_class)
