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


def cancel_once(task: asyncio.Future[Any], why: tuple[object, ...] = ()) -> bool:
    """Cancel `task` with the message `why` unless it has ended or is being cancelled already (it is in its clean-up,
    which a second cancel would cut short); True if this cancelled it."""
    if task.done() or (isinstance(task, asyncio.Task) and task.cancelling()):
        return False
    return task.cancel(*why)


async def stop_all(tasks: Iterable[asyncio.Future[Any]], why: tuple[object, ...] = ()) -> None:
    """Cancel the tasks with the message `why` (`cancel_once`) and wait until each has ended."""
    tasks = list(tasks)
    for task in tasks:
        cancel_once(task, why)
    await asyncio.gather(*tasks, return_exceptions=True)
