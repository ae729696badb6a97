"""The faults benchmark's crash rows: the backend SIGKILLed (or SIGTERMed) in the middle of the destructive step, or
while the model thinks, then `branchwise resume`.

Real processes throughout: `branchwise run` and later `branchwise resume` as child processes on one port and data
folder, a Chromium launched here (so it outlives the killed backend) with the extension paired to that port, the
sandbox shop with its SQLite database, the scripted model. The shop holds back its answer to "Add to cart" after it
has added the book, so a kill then lands while the action runs: sent, no result on record. The resumed run must judge
the add by the page (the cart it led to) and finish without adding the book a second time; killed before the add, it
must add it once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..agent.records import RunResult
from ..config import ServerConfig
from ..launcher import ChromiumConfig, launch_chromium
from ..pairing import load_or_create_token
from ..sandbox import ShopConfig, ShopQueries, ShopServer
from ..store import RunRecord, RunStore, default_store_path
from .scenarios import CART_PRODUCT, CART_TASK

log = logging.getLogger(__name__)

# How long the shop holds back its answer to the add: the backend is killed in that time.
HELD_S = 3.0
# Each child process's time limit.
CHILD_TIMEOUT_S = 120.0


class HeldAnswer:
    """The app's answer to POSTs on `path` held back for `delay_s` after the app has done the work."""

    def __init__(self, app: ASGIApp, path: str, delay_s: float) -> None:
        self.app, self.path, self.delay_s = app, path, delay_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return

        async def held(message: Message) -> None:
            if message["type"] == "http.response.start":
                await asyncio.sleep(self.delay_s)
            await send(message)

        await self.app(scope, receive, held)


class HeldShop(ShopServer):
    """The sandbox shop, its answer to "Add to cart" held back HELD_S after the book is in the cart."""

    def __init__(self, config: ShopConfig) -> None:
        super().__init__(config)
        build = self._build_app
        self._build_app = lambda: HeldAnswer(build(), "/cart/add", HELD_S)


@dataclass(frozen=True)
class Crashed:
    """The run as recorded after the resume, and where to count what it did."""

    run: RunRecord
    db_path: Path
    product_id: int
    # The first backend's exit status (a negative signal number when the signal itself ended it), and how many model
    # calls of the run were on record when it had exited.
    first_exit: int
    calls_kept: int
    # The status in the result the first backend wrote (--json) as it ended; None: it wrote none (SIGKILL).
    first_result: str | None = None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "branchwise.cli", *args]


async def _until(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout_s:.0f} s for {what}")
        await asyncio.sleep(0.05)


# When the backend is killed: given the data folder, the shop's database and the book's id, whether it is time.
Strike = Callable[[Path, Path, int], bool]


def add_in_flight(in_cart: Callable[[Path, int], int]) -> Strike:
    """Once the shop has put the book in the cart (its answer is held back, so the action is still running)."""
    return lambda data, db_path, product_id: in_cart(db_path, product_id) > 0


def thinking(data: Path, db_path: Path, product_id: int) -> bool:
    """Once the run has recorded its first page (the model then takes its time over the first action)."""
    path = default_store_path(data)
    if not path.exists():
        return False
    with RunStore(path) as store:
        return any(r.nodes > 0 for r in store.list_runs(1))


async def killed_and_resumed(work: Path, script: Path, strike: Strike, signum: int = signal.SIGKILL) -> Crashed:
    """Run CART_TASK in a child backend, send it `signum` when `strike` says, and resume the run in a second one. Both
    approve every question (a resume that ran the add again would get its yes)."""
    data = work / "data"
    db_path = work / "shop.sqlite3"
    port = free_port()
    token = load_or_create_token(data)
    common = ("--port", str(port), "--data-dir", str(data), "--script", str(script), "--confirm", "ask")
    yes = "y\n" * 5
    with HeldShop(ShopConfig(db_path=db_path)) as shop:
        product = ShopQueries(db_path).product_by_name(CART_PRODUCT)
        url = f"{shop.base_url}/product/{product.id}"
        chromium = await launch_chromium(ChromiumConfig(headless=True))
        result_path, log_path = work / "first-result.json", work / "first-backend.log"
        first: subprocess.Popen[str] | None = None
        # The first backend's stderr goes to a file: a pipe nobody reads could fill and block it as it stops.
        with log_path.open("w", encoding="utf-8") as first_log:
            try:
                log.info("crash: the first backend runs the task on port %d", port)
                first = child = subprocess.Popen(
                    _cli("run", CART_TASK, "--start-url", url, "--strategy", "greedy", "--json", str(result_path),
                         *common), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=first_log, text=True)
                assert child.stdin is not None
                child.stdin.write(yes)
                child.stdin.flush()
                await _until(lambda: _listening(port) or child.poll() is not None, CHILD_TIMEOUT_S,
                             "the first backend")
                await chromium.pair(ServerConfig().extension_id, port, token)
                await _until(lambda: strike(data, db_path, product.id) or child.poll() is not None, CHILD_TIMEOUT_S,
                             "the moment to kill the backend")
                if child.poll() is not None:
                    raise RuntimeError(f"the first backend ended before it was killed: {_tail(log_path)}")
                os.kill(child.pid, signum)
                first_exit = await asyncio.to_thread(child.wait, CHILD_TIMEOUT_S)
                log.info("crash: backend ended by %s (exit %d); resuming", signal.Signals(signum).name, first_exit)
                first_result = (RunResult.model_validate_json(result_path.read_text(encoding="utf-8")).status
                                if result_path.exists() else None)
                with RunStore(default_store_path(data)) as store:
                    run_id = store.list_runs(1)[0].run_id
                    calls_kept = len(store.model_calls(run_id))
                resumed = await asyncio.to_thread(
                    subprocess.run, _cli("resume", run_id, "--connect-timeout", "60", *common), input=yes,
                    capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
                log.info("crash: resume exited %d:\n%s\n%s", resumed.returncode, resumed.stdout[-3000:],
                         resumed.stderr[-2000:])
                with RunStore(default_store_path(data)) as store:
                    return Crashed(store.load_run(run_id).run, db_path, product.id, first_exit, calls_kept,
                                   first_result)
            finally:
                if first is not None and first.poll() is None:
                    first.kill()
                    await asyncio.to_thread(first.wait)
                await chromium.close()


def _tail(path: Path, chars: int = 2000) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-chars:]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
