"""What an action made the page send: the environment lets a watcher (the network gate, safety/gate.py) see each
action it runs, and hands the mutating requests seen during it back with the action's result."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol

# allowed: an approved action's allowance let it through; released: held, then let go by whoever decides; failed: held,
# then refused (the server received nothing).
GatedOutcome = Literal["allowed", "released", "failed"]


@dataclass(frozen=True)
class GatedRequest:
    """A mutating request (POST, PUT, PATCH, DELETE) a page made while an action ran, and what became of it."""

    method: str
    url: str
    outcome: GatedOutcome

    @property
    def sent(self) -> bool:
        """It reached the network."""
        return self.outcome != "failed"

    def describe(self) -> str:
        how = {"allowed": "covered by the approval", "released": "released at the gate",
               "failed": "failed at the gate"}[self.outcome]
        return f"{self.method} {self.url} ({how})"


class WatchedEnv(Protocol):
    tab_id: int


class ActionWatch(Protocol):
    def acting(self, env: WatchedEnv, action_text: str) -> AbstractAsyncContextManager[list[GatedRequest]]:
        """Around one action in `env.tab_id`: yields the list the requests it makes are added to, complete on exit."""
        ...

    async def adopt(self, tab_id: int) -> None:
        """`tab_id` becomes a tab the run works in (a committed speculative tab): watch it from now on."""
        ...
