"""Stop signals end a command as Ctrl-C does, with the clean-up it started, and tell its run it was cut short."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from branchwise.core.status import TERMINATED
from branchwise.protocol import ListTabs, Tabs
from branchwise.terminate import Terminated, until_terminated

from extension_client import paired_socket, receive_json, running_backend


class Command:
    """A command that waits until cancelled, then takes a while to clean up (as closing Chromium does)."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()
        self.cancelled_with: tuple[object, ...] | None = None
        self.cleaned_up = False

    async def __call__(self) -> int:
        try:
            self.waiting.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:
            self.cancelled_with = exc.args
            raise
        finally:
            await asyncio.sleep(0.2)
            self.cleaned_up = True
        return 0


@pytest.fixture
def default_handling() -> Iterator[None]:
    """The signals' default handling, whatever the suite inherited (under `nohup` SIGHUP comes ignored, in a
    background job started without job control SIGINT does, and an ignored signal stays ignored: the last test; Ctrl-C
    is Python's KeyboardInterrupt, which asyncio.run takes over only from Python's own handler)."""
    before = {signum: signal.signal(signum, signal.SIG_DFL) for signum in (signal.SIGTERM, signal.SIGHUP)}
    before[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    for signum, handler in before.items():
        signal.signal(signum, handler)


@pytest.mark.usefixtures("default_handling")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_cancels_the_command_which_cleans_up_and_the_process_exits_as_the_signal_says(
        signum: int) -> None:
    command = Command()

    async def main() -> int:
        running = asyncio.ensure_future(until_terminated(command()))
        await command.waiting.wait()
        os.kill(os.getpid(), signum)
        await asyncio.sleep(0.05)
        os.kill(os.getpid(), signum)  # a second signal during the clean-up does not cut it short
        return await running

    with pytest.raises(Terminated) as stopped:
        asyncio.run(main())
    assert command.cancelled_with == (TERMINATED,) and command.cleaned_up
    assert stopped.value.exit_code == 128 + signum and str(stopped.value) == signal.Signals(signum).name
    # The process's own handling is back: the signals were the command's only while it ran.
    assert signal.getsignal(signum) == signal.SIG_DFL


@pytest.mark.usefixtures("default_handling")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_backend_still_reaches_the_extension_while_a_stopped_command_cleans_up(signum: int, tmp_path: Path) -> None:
    """A stopped run lifts its network gate and closes its tabs through the extension: the backend must not go down
    the moment the signal arrives (uvicorn's own handlers did that, and the clean-up waited 45 s for a link that could
    not come back)."""
    answered: list[list[int]] = []

    async def command() -> int:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            link = backend.hub.link
            assert link is not None
            try:
                os.kill(os.getpid(), signum)
                await asyncio.Event().wait()
            finally:
                await asyncio.sleep(0.3)  # uvicorn looks at its exit flag every 0.1 s
                asking = asyncio.ensure_future(link.request(ListTabs(), Tabs, 5))
                asked = await receive_json(ws)
                await ws.send(json.dumps({"type": "tabs", "id": "t", "reply_to": asked["id"],
                                          "tabs": [{"tab_id": 7, "index": 0}]}))
                answered.append([tab.tab_id for tab in (await asking).tabs])
                await ws.close()
        return 0

    stopped_by = Terminated if signum == signal.SIGTERM else KeyboardInterrupt  # Ctrl-C is asyncio.run's own
    with pytest.raises(stopped_by):
        asyncio.run(until_terminated(command()))
    assert answered == [[7]]


def test_a_cancel_from_outside_passes_through_as_a_cancel_not_a_stop_signal() -> None:
    command = Command()

    async def main() -> None:
        running = asyncio.ensure_future(until_terminated(command()))
        await command.waiting.wait()
        running.cancel()  # what asyncio.run does on Ctrl-C
        await running

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert command.cancelled_with == () and command.cleaned_up


def test_a_command_that_ends_on_its_own_returns_its_code() -> None:
    async def quick() -> int:
        return 7

    assert asyncio.run(until_terminated(quick())) == 7


def test_a_signal_the_process_was_started_to_ignore_stays_ignored() -> None:
    """`nohup branchwise run …` must outlive the terminal it was started from."""
    command = Command()
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        async def main() -> int:
            running = asyncio.ensure_future(until_terminated(command()))
            await command.waiting.wait()
            os.kill(os.getpid(), signal.SIGHUP)
            await asyncio.sleep(0.1)
            assert not running.done()
            running.cancel()
            return await running

        with pytest.raises(asyncio.CancelledError):
            asyncio.run(main())
        assert command.cancelled_with == () and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
