"""gather_all: runs side by side are stopped together, each told why, and each cleans up before the caller goes on."""

from __future__ import annotations

import asyncio

import pytest

from branchwise.core.tasks import BESIDE_FAILED, gather_all


class Worker:
    """Works until cancelled (or fails when told to), then takes a while to clean up."""

    def __init__(self, fails: bool = False, clean_up_s: float = 0.2) -> None:
        self.fails = fails
        self.clean_up_s = clean_up_s
        self.started = asyncio.Event()
        self.cancelled_with: tuple[object, ...] | None = None
        self.cleaned_up = False

    async def __call__(self) -> str:
        self.started.set()
        try:
            if self.fails:
                await asyncio.sleep(0.05)
                raise RuntimeError("broken")
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:
            self.cancelled_with = exc.args
            raise
        finally:
            await asyncio.sleep(self.clean_up_s)
            self.cleaned_up = True
        return "done"


def test_results_come_in_order() -> None:
    async def value(x: int) -> int:
        await asyncio.sleep(0.01 * (3 - x))
        return x

    assert asyncio.run(gather_all(value(x) for x in range(3))) == [0, 1, 2]


def test_a_cancel_reaches_every_run_with_its_message_and_waits_for_their_clean_up() -> None:
    workers = [Worker(clean_up_s=0.05), Worker(clean_up_s=0.5)]

    async def main() -> None:
        running = asyncio.ensure_future(gather_all(w() for w in workers))
        await asyncio.gather(*(w.started.wait() for w in workers))
        running.cancel("told to stop")
        with pytest.raises(asyncio.CancelledError):
            await running
        # Both cleaned up by the time the caller goes on: asyncio.gather would return after the quicker one.
        assert [(w.cancelled_with, w.cleaned_up) for w in workers] == [(("told to stop",), True)] * 2

    asyncio.run(main())


def test_a_run_that_fails_stops_the_others_which_are_told_why_and_clean_up() -> None:
    workers = [Worker(), Worker(fails=True, clean_up_s=0.1)]
    with pytest.raises(RuntimeError, match="broken"):
        asyncio.run(gather_all(w() for w in workers))
    assert (workers[0].cancelled_with, workers[0].cleaned_up) == ((BESIDE_FAILED,), True)
    assert workers[1].cleaned_up
