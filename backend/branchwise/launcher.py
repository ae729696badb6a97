"""Start Chromium with the Branchwise extension loaded and paired, as `--launch`, the demo and the e2e tests do.

We start Chromium ourselves with `--remote-debugging-port=0` and read the port from DevToolsActivePort: letting
chromedriver launch it with an extension hangs on the first navigation in ~9 % of launches (docs/platform.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from websockets.asyncio.client import connect

from .pairing import pairing_url

log = logging.getLogger(__name__)

CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")
# How long Chromium's helper processes may take to follow the browser process out before they are killed.
HELPERS_EXIT_SECONDS = 5.0


def default_extension_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "extension"


class ChromiumConfig(BaseModel):
    binary: str | None = None
    extension_dir: Path = default_extension_dir()
    headless: bool = True
    user_data_dir: Path | None = None
    window_width: int = 1280
    window_height: int = 900
    start_timeout_seconds: float = 30.0


class BrowserLaunchError(RuntimeError):
    pass


def find_chromium(config: ChromiumConfig) -> str:
    wanted = config.binary
    for candidate in ([wanted] if wanted else CHROMIUM_CANDIDATES):
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if path and os.access(path, os.X_OK):
            return path
    raise BrowserLaunchError(
        "Chromium was not found. Install it (Debian: `apt-get install chromium chromium-driver`, or `make setup`) "
        "or point BRANCHWISE_CHROMIUM (or `chromium` in the data directory's config.toml) at the binary."
    )


def chromium_args(config: ChromiumConfig, user_data_dir: Path) -> list[str]:
    extension = str(config.extension_dir.resolve())
    args = [
        "--remote-debugging-port=0",
        f"--user-data-dir={user_data_dir}",
        f"--window-size={config.window_width},{config.window_height}",
        f"--load-extension={extension}",
        f"--disable-extensions-except={extension}",
        # Without these Chromium floods a closed network with connection attempts.
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--no-sandbox",
    ]
    if config.headless:
        args.append("--headless=new")
    return args + ["about:blank"]


@dataclass
class LaunchedBrowser:
    process: asyncio.subprocess.Process
    devtools_port: int
    browser_ws_path: str
    user_data_dir: Path
    _owns_profile: bool = field(default=False, repr=False)

    @property
    def debugger_address(self) -> str:
        """For Selenium's ChromeOptions.debugger_address."""
        return f"127.0.0.1:{self.devtools_port}"

    async def cdp(self, method: str, params: dict[str, object] | None = None) -> dict[str, Any]:
        """One command on the browser-level DevTools endpoint."""
        url = f"ws://127.0.0.1:{self.devtools_port}{self.browser_ws_path}"
        async with connect(url, max_size=None) as ws:
            await ws.send(json.dumps({"id": 1, "method": method, "params": params or {}}))
            while True:
                reply = json.loads(await ws.recv())
                if reply.get("id") == 1:
                    if "error" in reply:
                        raise BrowserLaunchError(f"{method}: {reply['error'].get('message')}")
                    result: dict[str, Any] = reply.get("result", {})
                    return result

    async def open_page(self, url: str) -> str:
        result = await self.cdp("Target.createTarget", {"url": url})
        return str(result["targetId"])

    async def close_page(self, target_id: str) -> None:
        await self.cdp("Target.closeTarget", {"targetId": target_id})

    async def pair(self, extension_id: str, backend_port: int, token: str) -> str:
        """Open the options page with the pairing link: it stores the address and token, then the worker connects."""
        return await self.open_page(pairing_url(extension_id, backend_port, token))

    async def close(self) -> None:
        helpers = _helpers_of(self.process.pid)
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        # Its helpers outlive the browser process by a moment, and the network service writes its state into the
        # profile on the way out: a profile removed before they are gone comes back as a stub that nobody removes
        # (223 of them in a day of this project's tests).
        await _end(helpers, HELPERS_EXIT_SECONDS)
        if self._owns_profile:
            shutil.rmtree(self.user_data_dir, ignore_errors=True)


# A process as /proc tells it: its id and its start time (the id alone may be a new process's by the time it is read).
Helper = tuple[int, str]


def _running() -> dict[Helper, int]:
    """Every running process, with its parent's id; none where there is no /proc (a zombie does not run: it only
    waits to be reaped, by whoever adopted it, in their own time)."""
    parents: dict[Helper, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text()
        except OSError:
            continue  # it ended meanwhile
        state, parent, *rest = fields[fields.rindex(")") + 2:].split()
        if state != "Z":
            parents[int(stat.parent.name), rest[17]] = int(parent)
    return parents


def _helpers_of(pid: int) -> set[Helper]:
    """The running processes `pid` started, directly or not."""
    parents = _running()
    family, helpers = {pid}, set[Helper]()
    while True:
        found = {helper for helper, parent in parents.items() if parent in family and helper not in helpers}
        if not found:
            return helpers
        helpers |= found
        family |= {helper_pid for helper_pid, _ in found}


async def _end(helpers: set[Helper], seconds: float) -> None:
    """Wait until none of `helpers` runs, killing those that still do after `seconds` (0: at once, a browser that did
    not start; nothing to warn about then, its launch fails with the reason)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while left := helpers & _running().keys():
        if asyncio.get_running_loop().time() >= deadline:
            if seconds:
                log.warning("%d of Chromium's helper processes still ran %g s after it closed: killed", len(left),
                            seconds)
            for pid, _ in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            return
        await asyncio.sleep(0.05)


async def launch_chromium(config: ChromiumConfig) -> LaunchedBrowser:
    binary = find_chromium(config)
    if not (config.extension_dir / "manifest.json").exists():
        raise BrowserLaunchError(f"no extension at {config.extension_dir} (expected manifest.json there)")
    owns_profile = config.user_data_dir is None
    user_data_dir = config.user_data_dir or Path(tempfile.mkdtemp(prefix="branchwise-chromium-"))
    user_data_dir.mkdir(parents=True, exist_ok=True)
    port_file = user_data_dir / "DevToolsActivePort"
    port_file.unlink(missing_ok=True)
    stderr_path = user_data_dir / "chromium-stderr.log"
    with open(stderr_path, "wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            binary, *chromium_args(config, user_data_dir),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
        )
    try:
        lines = await _devtools_port(process, port_file, stderr_path, config.start_timeout_seconds)
    except BaseException:
        # Nothing is left of a browser that did not start (or whose start was cancelled): no process, no profile.
        helpers = _helpers_of(process.pid)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        await _end(helpers, 0)
        if owns_profile:
            shutil.rmtree(user_data_dir, ignore_errors=True)
        raise
    browser = LaunchedBrowser(process, int(lines[0]), lines[1].strip(), user_data_dir, owns_profile)
    log.info("Chromium %s started (pid %d, DevTools port %d)", binary, process.pid, browser.devtools_port)
    return browser


async def _devtools_port(process: asyncio.subprocess.Process, port_file: Path, stderr_path: Path,
                         timeout: float) -> list[str]:
    """The lines of DevToolsActivePort (the port, then the browser's path) once Chromium has written them."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if process.returncode is not None:
            tail = stderr_path.read_text(errors="replace")[-2000:]
            raise BrowserLaunchError(f"Chromium exited with code {process.returncode}:\n{tail}")
        lines = port_file.read_text().split("\n") if port_file.exists() else []
        if len(lines) >= 2 and lines[0].strip().isdigit():
            return lines
        if asyncio.get_running_loop().time() > deadline:
            raise BrowserLaunchError(f"Chromium did not open its DevTools port within {timeout:.0f} s")
        await asyncio.sleep(0.05)
