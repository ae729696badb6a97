"""Coroutines side by side, stopped together: a cancel reaches each with its message (a run tells a stop signal from
the user's stop by it) and returns only once each has finished cleaning up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

# Why a coroutine is cancelled when one beside it failed.
BESIDE_FAILED = "stopped: a run beside it failed"


async def gather_all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """asyncio.gather's results. Cancelled, it waits for every coroutine's clean-up, where gather returns at the first
    to finish; one that fails cancels the others, and waits for them likewise."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException as exc:
        # Cancelled, gather has cancelled them all with the cancel's message; a coroutine failed, the rest are told
        # why.
        await stop_all(tasks, exc.args if isinstance(exc, asyncio.CancelledError) else (BESIDE_FAILED,))
        raise


async def stop_all(tasks: Iterable[asyncio.Future[Any]], why: tuple[object, ...] = ()) -> None:
    """Cancel the tasks with the message `why` and wait until each has ended. One already being cancelled is left to
    its clean-up: a second cancel would cut it short."""
    tasks = list(tasks)
    for task in tasks:
        if not task.done() and not (isinstance(task, asyncio.Task) and task.cancelling()):
            task.cancel(*why)
    await asyncio.gather(*tasks, return_exceptions=True)
