"""Saying, while the model works on a call that takes long, that the run is waiting on it.

A small local model on a laptop's CPU reads a prompt of a few thousand tokens for a minute or more (the demo's first
step took 2 min 54 s beside another run), and a run that prints nothing meanwhile looks hung. One line goes to the
run's progress (the terminal, the side panel) once the oldest call under way has taken `first_s`, then every
`every_s` while calls are under way; calls made at once (action_aware's generators, value samples) share the line.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..core.status import Role

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Call:
    role: Role
    prompt_tokens: int
    started: float


class ModelWait:
    def __init__(self, say: Callable[[str], Awaitable[None]], *, first_s: float = 30.0, every_s: float = 60.0) -> None:
        self.say = say
        self.first_s = first_s
        self.every_s = every_s
        # In the order they started: the first is the oldest.
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count()
        self._telling: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self._closed = False

    def started(self, role: Role, prompt_tokens: int) -> int:
        """A call went to the model; the number to end it with."""
        call_id = next(self._ids)
        if self._closed:
            return call_id
        self._calls[call_id] = _Call(role, prompt_tokens, time.monotonic())
        if self._telling is None or self._telling.done():
            self._telling = asyncio.create_task(self._tell())
        return call_id

    def close(self) -> None:
        """The run has ended: calls it left under way (a sibling of a failed one, still answering) are no longer
        said to be waited on."""
        self._closed = True
        self._calls.clear()
        self._changed.set()

    def ended(self, call_id: int) -> None:
        self._calls.pop(call_id, None)
        self._changed.set()  # wakes the line's task, which ends once no call is under way (never cut mid-line)

    def line(self, now: float) -> str:
        """`waiting on the model: the policy's call, 45 s so far (3,996 prompt tokens)`, or for several calls at once
        `waiting on the model: 3 calls (reward ×3), the oldest 45 s so far`."""
        calls = list(self._calls.values())
        waited = f"{now - calls[0].started:.0f} s so far"
        if len(calls) == 1:
            only = calls[0]
            return f"waiting on the model: the {only.role}'s call, {waited} ({only.prompt_tokens:,} prompt tokens)"
        roles = ", ".join(f"{role} ×{count}" if count > 1 else role
                          for role, count in Counter(c.role for c in calls).items())
        return f"waiting on the model: {len(calls)} calls ({roles}), the oldest {waited}"

    async def _tell(self) -> None:
        told_at: float | None = None
        while self._calls:
            now = time.monotonic()
            oldest = next(iter(self._calls.values())).started
            due = oldest + self.first_s if told_at is None or told_at < oldest else told_at + self.every_s
            if now < due:
                self._changed.clear()
                try:
                    await asyncio.wait_for(self._changed.wait(), due - now)
                except TimeoutError:
                    pass
                continue
            told_at = now
            try:
                await self.say(self.line(now))
            except Exception:  # the run goes on without its progress line
                log.exception("could not say that the run waits on the model")
