"""Coroutines side by side, stopped together: a cancel reaches each with its message (a run tells a stop signal from
the user's stop by it) and returns only once each has finished cleaning up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")

# Why a coroutine is cancelled when one beside it failed.
BESIDE_FAILED = "stopped: a run beside it failed"


async def gather_all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """asyncio.gather's results. Cancelled, it waits for every coroutine's clean-up, where gather returns at the first
    to finish; one that fails cancels the others, and waits for them likewise."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        current = asyncio.current_task()
        if current is None or not current.cancelling():
            # A coroutine failed: the rest are stopped. When this task was cancelled, gather has cancelled them all,
            # and cancelling again would cut their clean-up short.
            for task in tasks:
                task.cancel(BESIDE_FAILED)
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
