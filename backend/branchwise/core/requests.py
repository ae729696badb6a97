"""What an action made the page send: the environment lets a watcher (the network gate, safety/gate.py) see each
action it runs, and hands the mutating requests seen during it back with the action's result. What an approved action
is known to send beforehand (ExpectedRequest) is what its approval lets through the gate."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol
from urllib.parse import urlsplit, urlunsplit

from ..protocol import AllowedRequest

# allowed: an approved action's allowance let it through; released: held, then let go by whoever decides; failed: held,
# then refused (the server received nothing); escaped: held, then let go by the browser itself when it ended the
# extension's debugging session (the user cancelled the "is debugging this browser" bar), before anyone decided.
GatedOutcome = Literal["allowed", "released", "failed", "escaped"]


@dataclass(frozen=True)
class ExpectedRequest:
    """A mutating request an action is known to send before it runs (the submission of a POST form, read off the DOM):
    approving the action lets exactly one request with this method and address through the network gate."""

    method: str
    # Absolute; a fragment never reaches the server, so it is dropped here and ignored when matching.
    url: str

    @classmethod
    def of(cls, method: str, url: str) -> ExpectedRequest:
        return cls(method.upper(), urlunsplit(urlsplit(url.strip())._replace(fragment="")))

    def describe(self) -> str:
        return f"{self.method} to {self.url}"

    def allowed(self) -> AllowedRequest:
        """As `act {allow}` and the confirmation card name it."""
        return AllowedRequest.model_validate({"method": self.method, "url": self.url})


@dataclass(frozen=True)
class GatedRequest:
    """A mutating request (any method but GET, HEAD and OPTIONS) a page made while an action ran, and what became of
    it."""

    method: str
    url: str
    outcome: GatedOutcome

    @property
    def sent(self) -> bool:
        """It reached the network."""
        return self.outcome != "failed"

    def describe(self) -> str:
        how = {"allowed": "covered by the approval", "released": "released at the gate",
               "failed": "failed at the gate",
               "escaped": "let go by the browser when its debugging session ended, undecided"}[self.outcome]
        return f"{self.method} {self.url} ({how})"


class WatchedEnv(Protocol):
    tab_id: int


class ActionWatch(Protocol):
    def acting(self, env: WatchedEnv, action_text: str, approved: Sequence[ExpectedRequest] | None = None,
               ) -> AbstractAsyncContextManager[list[GatedRequest]]:
        """Around one action in `env.tab_id`: yields the list the requests it makes are added to, complete on exit.
        `approved`: the user approved the action, and it may send these (None: nobody approved it)."""
        ...

    async def adopt(self, tab_id: int) -> None:
        """`tab_id` becomes a tab the run works in (a committed speculative tab): watch it from now on."""
        ...
