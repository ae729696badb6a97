"""The event loop's error reports: one of a kind per interval, with the count of those left out."""

from __future__ import annotations

import asyncio
from typing import Any

from branchwise.looperrors import RateLimitedLoopErrors


def test_each_kind_of_report_is_passed_on_once_per_interval_with_the_count_left_out() -> None:
    now = [0.0]
    passed: list[str] = []
    errors = RateLimitedLoopErrors(10.0, then=lambda _loop, ctx: passed.append(ctx["message"]), clock=lambda: now[0])
    loop = asyncio.new_event_loop()
    try:
        full: dict[str, Any] = {"message": "socket.accept() out of system resource", "exception": OSError(24, "x")}
        for _ in range(500):
            errors(loop, full)
        errors(loop, {"message": "Task exception was never retrieved", "exception": ValueError()})
        now[0] = 12.0
        errors(loop, full)
    finally:
        loop.close()
    assert passed == ["socket.accept() out of system resource", "Task exception was never retrieved",
                      "socket.accept() out of system resource (499 more like it in the last 12 s not logged)"]
