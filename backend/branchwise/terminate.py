"""Stop signals as cancellation: a command told to stop by SIGTERM (`kill`, a service manager) or SIGHUP (its terminal
closed) is cancelled as Ctrl-C cancels it, so that what it started is closed (Chromium and its profile, the sandbox
sites' copies, a local model server) and its run's record kept. The cancel carries TERMINATED: the run is recorded as
interrupted (resumable while its tab is open), where Ctrl-C records a stop by the user. A signal the process was
started to ignore (`nohup`) stays ignored."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

from .core.status import TERMINATED

log = logging.getLogger(__name__)

SIGNALS = (signal.SIGTERM, signal.SIGHUP)

T = TypeVar("T")


class Terminated(Exception):
    """The command was cancelled because the process received `signum`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """As a shell reports a process a signal ended: 128 + the signal's number."""
        return 128 + self.signum


async def until_terminated(command: Coroutine[Any, Any, T]) -> T:
    """`command`'s result; Terminated when a stop signal cancelled it (Ctrl-C's cancellation passes through)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(command)
    received: list[int] = []

    def stop(signum: int) -> None:
        if received:  # a second signal must not cut short the clean-up the first one started
            log.warning("already stopping (%s); SIGKILL ends the process at once", signal.Signals(signum).name)
            return
        received.append(signum)
        log.warning("%s received: stopping", signal.Signals(signum).name)
        task.cancel(TERMINATED)

    # The signals' handlers before, put back after; one the process was started to ignore is left alone.
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    handled = [signum for signum in SIGNALS if previous[signum] != signal.SIG_IGN]
    try:
        for signum in handled:
            loop.add_signal_handler(signum, stop, signum)
    except (ValueError, RuntimeError):  # not the main thread: the signals are not this command's to handle
        return await task
    try:
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if received and (current is None or not current.cancelling()):
            raise Terminated(received[0]) from None
        raise
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
            if previous[signum] is not None:  # None: a handler set outside Python, which cannot be put back
                signal.signal(signum, previous[signum])
