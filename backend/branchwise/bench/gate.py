"""Network gate benchmark: what holding a tab's requests (CDP Fetch) adds to a page load and to a POST.

    python -m branchwise.bench.gate [--runs 10] [--resources 150] [--json PATH]

With the gate on, every request of the tab is paused until the extension's worker continues it (GETs at once), so a
page load pays one worker round trip per request. The benchmark serves a GET-heavy page (images, scripts, stylesheets,
all `no-store` so every load fetches them again) and loads it in a handed-over tab, gated and ungated interleaved,
timing (a) the load as the page itself measures it (Navigation Timing, start to loadEventEnd) and (b) the agent's
`act goto` round trip. It also times an in-page `fetch` POST that the gate holds and an always-yes approver releases,
against the same POST ungated. Prints a table; no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import logging
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from selenium import webdriver

from ..agent.env import BrowserEnv
from ..config import ServerConfig
from ..core.approval import ApprovalRequest, Decision
from ..launcher import ChromiumConfig
from ..protocol import GotoCmd
from ..safety.gate import GateRun, gate_run
from ..session import Session, open_session
from ..store import RunWriter
from .observe import Stats, attached_driver
from .pages import serve_handler
from .report import run_and_report

log = logging.getLogger(__name__)

GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


def heavy_page(resources: int) -> str:
    """A page with `resources` subresources: two thirds images, the rest scripts and stylesheets, every URL unique."""
    parts = []
    for i in range(resources):
        kind = i % 6
        if kind in (0, 1, 2, 3):
            parts.append(f'<img src="/r/img{i}.gif" width="8" height="8" alt="">')
        elif kind == 4:
            parts.append(f'<script src="/r/s{i}.js"></script>')
        else:
            parts.append(f'<link rel="stylesheet" href="/r/c{i}.css">')
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Heavy</title></head><body><h1>Heavy</h1>"
            + "".join(parts) + "<p id='done'>loaded</p></body></html>")


def _handler(resources: int) -> type[http.server.BaseHTTPRequestHandler]:
    page = heavy_page(resources).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: without this, Nagle + delayed ACK stall each response ~40 ms.
        disable_nagle_algorithm = True

        def _send(self, body: bytes, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            path = self.path.split("?")[0]
            if path.endswith(".gif"):
                self._send(GIF, "image/gif")
            elif path.endswith(".js"):
                self._send(b"window.n = (window.n || 0) + 1;", "text/javascript")
            elif path.endswith(".css"):
                self._send(b"h1 { margin: 0 }", "text/css")
            else:
                self._send(page, "text/html; charset=utf-8")

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._send(b"ok", "text/plain")

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

    return Handler


class ApproveAll:
    """The benchmark's approver: yes at once, so the hold round trip is all that is timed."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision(True, "bench")


class ModeResult(BaseModel):
    load_ms: Stats
    act_ms: Stats
    post_ms: Stats


class GateBenchReport(BaseModel):
    chromium: str
    cpus: int
    python: str
    runs: int
    resources: int
    requests_per_load: int
    ungated: ModeResult
    gated: ModeResult

    @property
    def added_load_ms(self) -> float:
        return self.gated.load_ms.median - self.ungated.load_ms.median


def _switch_to(driver: webdriver.Chrome, url_part: str) -> None:
    for handle in driver.window_handles:
        driver.switch_to.window(handle)
        if url_part in driver.current_url:
            return
    raise RuntimeError(f"no tab shows {url_part}")


NAVIGATION = """const e = performance.getEntriesByType('navigation')[0];
return [e.loadEventEnd - e.startTime, performance.getEntriesByType('resource').length];"""
POST = """const done = arguments[0]; const t = performance.now();
fetch('/post', {method: 'POST', body: 'x'}).then(() => done(performance.now() - t), (e) => done(-1));"""


async def _sample(session: Session, driver: webdriver.Chrome, env: BrowserEnv, url: str) -> tuple[float, float, float,
                                                                                               int]:
    started = time.perf_counter()
    result = await session.browser.act(env.tab_id, GotoCmd(url=url))
    act_ms = (time.perf_counter() - started) * 1000
    if not result.ok:
        raise RuntimeError(f"loading {url} failed: {result.error}")

    def measure() -> tuple[float, int, float]:
        _switch_to(driver, "/heavy")
        load_ms, count = driver.execute_script(NAVIGATION)
        post_ms = driver.execute_async_script(POST)
        return float(load_ms), int(count), float(post_ms)

    load_ms, count, post_ms = await asyncio.to_thread(measure)
    if post_ms < 0:
        raise RuntimeError("the benchmark's POST failed")
    return load_ms, act_ms, post_ms, count


async def run_benchmark(runs: int, resources: int) -> GateBenchReport:
    with (tempfile.TemporaryDirectory(prefix="branchwise-bench-gate-") as tmp,
          serve_handler(_handler(resources), "bench-gate") as base_url):
        config = ServerConfig(port=0, data_dir=Path(tmp) / "data")
        async with open_session(config, ChromiumConfig(headless=True)) as session, attached_driver(session) as driver:
            chromium = str(driver.capabilities.get("browserVersion", "unknown"))
            tab = await session.browser.open_tab(f"{base_url}/heavy?warmup")
            env = BrowserEnv(session.browser, tab.tab_id)
            run = GateRun("bench", RunWriter(None, "bench"), ApproveAll())
            samples: dict[bool, list[tuple[float, float, float, int]]] = {False: [], True: []}
            try:
                for i in range(runs + 1):  # the first round warms both paths up and is not recorded
                    for gated in ((False, True) if i % 2 == 0 else (True, False)):
                        async with gate_run(session.gate if gated else None, env, run):
                            sample = await _sample(session, driver, env, f"{base_url}/heavy?run={i}&gated={gated}")
                        if i > 0:
                            samples[gated].append(sample)
            finally:
                await session.browser.close_tab(tab.tab_id)

    def mode(values: list[tuple[float, float, float, int]]) -> ModeResult:
        return ModeResult(load_ms=Stats.of([v[0] for v in values]), act_ms=Stats.of([v[1] for v in values]),
                          post_ms=Stats.of([v[2] for v in values]))

    return GateBenchReport(chromium=chromium, cpus=os.cpu_count() or 0, python=platform.python_version(), runs=runs,
                           resources=resources, requests_per_load=samples[True][-1][3] + 1,
                           ungated=mode(samples[False]), gated=mode(samples[True]))


def _timing(stats: Stats) -> str:
    return f"{stats.median:,.1f} [{stats.min:,.1f}–{stats.max:,.1f}]"


def format_report(report: GateBenchReport) -> str:
    rows = [
        ("Page load (Navigation Timing) ms", report.ungated.load_ms, report.gated.load_ms),
        ("act goto round trip ms", report.ungated.act_ms, report.gated.act_ms),
        ("fetch POST ms (gated: held, approved)", report.ungated.post_ms, report.gated.post_ms),
    ]
    label_width = max(len(r[0]) for r in rows)
    cells = [(_timing(u), _timing(g), f"{g.median - u.median:+,.1f}") for _, u, g in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(("ungated", "gated", "added"))]
    lines = [
        f"Network gate benchmark: Chromium {report.chromium}, {report.cpus} CPUs, Python {report.python}; "
        f"{report.runs} interleaved runs per mode; a page of {report.requests_per_load} GET requests; "
        "times as median [min–max]",
        "",
        " " * label_width + "  " + "  ".join(h.rjust(w) for h, w in zip(("ungated", "gated", "added"), widths,
                                                                           strict=True)),
    ]
    for (label, _, _), cell in zip(rows, cells, strict=True):
        lines.append(label.ljust(label_width) + "  " + "  ".join(c.rjust(w) for c, w in zip(cell, widths, strict=True)))
    per_request = report.added_load_ms / max(report.requests_per_load, 1)
    lines.append(f"Added per paused request (load, medians): {per_request:.2f} ms")
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m branchwise.bench.gate", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="measured loads per mode (default 10)")
    parser.add_argument("--resources", type=int, default=150, help="subresources of the page (default 150)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.resources < 0:
        parser.error("--runs must be at least 1 and --resources not negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run_and_report(run_benchmark(args.runs, args.resources), format_report, verbose=args.verbose,
                          json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
