"""The event loop's error reports, at most one of a kind per interval.

When the process runs out of file descriptors, asyncio's accept loop reports "socket.accept() out of system resource"
once per pending connection and tries again a second later, without stopping: with a few hundred half-open connections
that wrote 110 MB of tracebacks in 35 s. Each kind of report (its message and exception type) is logged once, and
again after the interval with the number left out in between.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

Handler = Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object]


class RateLimitedLoopErrors:
    def __init__(self, interval_s: float = 10.0, then: Handler | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval_s = interval_s
        self._then = then
        self._clock = clock
        self._last: dict[tuple[str, str], float] = {}
        self._left_out: dict[tuple[str, str], int] = {}

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        kind = (message, type(context.get("exception")).__name__)
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self.interval_s:
            self._left_out[kind] = self._left_out.get(kind, 0) + 1
            return
        self._last[kind] = now
        left_out = self._left_out.pop(kind, 0)
        if left_out:
            context = {**context, "message": f"{message} ({left_out} more like it in the last "
                                             f"{now - last if last is not None else 0:.0f} s not logged)"}
        if self._then is not None:
            self._then(loop, context)
        else:
            loop.default_exception_handler(context)
