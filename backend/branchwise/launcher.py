"""Start Chromium with the Branchwise extension loaded and paired, as `--launch`, the demo and the e2e tests do.

We start Chromium ourselves with `--remote-debugging-port=0` and read the port from DevToolsActivePort: letting
chromedriver launch it with an extension hangs on the first navigation in ~9 % of launches (docs/platform.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from websockets.asyncio.client import connect

from .pairing import pairing_url

log = logging.getLogger(__name__)

CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")


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
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self._owns_profile:
            shutil.rmtree(self.user_data_dir, ignore_errors=True)


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
    deadline = asyncio.get_running_loop().time() + config.start_timeout_seconds
    while True:
        if process.returncode is not None:
            tail = stderr_path.read_text(errors="replace")[-2000:]
            raise BrowserLaunchError(f"Chromium exited with code {process.returncode}:\n{tail}")
        lines = port_file.read_text().split("\n") if port_file.exists() else []
        if len(lines) >= 2 and lines[0].strip().isdigit():
            break
        if asyncio.get_running_loop().time() > deadline:
            process.kill()
            raise BrowserLaunchError(
                f"Chromium did not open its DevTools port within {config.start_timeout_seconds:.0f} s")
        await asyncio.sleep(0.05)
    browser = LaunchedBrowser(process, int(lines[0]), lines[1].strip(), user_data_dir, owns_profile)
    log.info("Chromium %s started (pid %d, DevTools port %d)", binary, process.pid, browser.devtools_port)
    return browser
