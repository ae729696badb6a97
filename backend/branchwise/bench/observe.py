"""Observe benchmark: how long the agent waits for a page's text, and how big that text is.

    python -m branchwise.bench.observe [--runs 10] [--sizes 1000 6500] [--json PATH]

For each generated shop page it times, interleaved, (a) the agent's full path, BrowserEnv.observe(), capturing the page
afresh: extension capture, WebSocket transfer and validation, backend processing; (b) the same when the page has not
changed since the last observation (the extension reuses its capture, the backend its processing: how search looks
at a page again); and (c) a bare `Accessibility.getFullAXTree` sent by Selenium to the same Chromium, the floor any
AX-tree based observation pays. It also sizes our text against WebArena's own serializer on the same raw tree
(webarena_text) and lists the interactive elements WebArena's text shows that ours does not. It prints a table to
stdout; no assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from selenium import webdriver

from ..agent.env import BrowserEnv, EnvView
from ..browser import Browser
from ..config import ServerConfig
from ..core.tokens import CHARS_PER_TOKEN
from ..launcher import ChromiumConfig
from ..protocol import Observation
from ..selenium_attach import attach_selenium
from ..session import Session, open_session
from . import webarena_text
from .pages import serve, write_pages
from .report import run_and_report

log = logging.getLogger(__name__)

DEFAULT_SIZES = (1000, 6500)
# Same estimate the prompt builder uses (policy/prompts.py); no tokenizer is installed offline.
TOKENIZER_LABEL = f"approximate: characters / {CHARS_PER_TOKEN}"


class Stats(BaseModel):
    """Milliseconds over the measured runs."""

    median: float
    min: float
    max: float

    @classmethod
    def of(cls, samples_ms: Sequence[float]) -> Stats:
        return cls(median=statistics.median(samples_ms), min=min(samples_ms), max=max(samples_ms))


class PageResult(BaseModel):
    target_elements: int
    url: str
    dom_elements: int
    runs: int
    full_ms: Stats
    observe_ms: Stats
    capture_ms: Stats
    transfer_ms: Stats
    process_ms: Stats
    raw_ms: Stats
    ratio_full_to_raw: float
    reused_ms: Stats
    ratio_reused_to_raw: float
    raw_ax_nodes: int
    # Compact UTF-8 JSON, as JSON.stringify writes it. The extension forwards these nodes untouched, so this is the size
    # of its WebSocket frame (checked once against the received frame: within 0.1 %).
    raw_ax_json_bytes: int
    observed_ax_nodes: int
    # The Observation after validation, re-serialized: the fields of each node the backend keeps.
    validated_json_bytes: int
    text_lines: int
    text_chars: int
    text_tokens: int
    tokenizer: str
    webarena_text_tokens: int
    ratio_tokens_to_webarena: float
    webarena_interactive: int
    # Interactive elements (role 'name') in WebArena's text and not in ours, counted.
    missing_interactive: list[str]


class BenchReport(BaseModel):
    chromium: str
    cpus: int
    python: str
    runs: int
    pages: list[PageResult]


@dataclass(frozen=True)
class FullSample:
    full_ms: float
    observe_ms: float
    capture_ms: float
    view: EnvView
    observation: Observation

    @property
    def transfer_ms(self) -> float:
        """Worker-side serialization, WebSocket, JSON parsing and pydantic validation."""
        return self.observe_ms - self.capture_ms

    @property
    def process_ms(self) -> float:
        """What BrowserEnv.observe adds once the observation arrived: process(), plus a negligible sensitive list."""
        return self.full_ms - self.observe_ms


class TimedBrowser(Browser):
    """The session's browser, remembering the last observation and how long its request took.

    Wrapping it lets the benchmark time BrowserEnv.observe() unmodified and still split the time into its parts.
    """

    def __init__(self, inner: Browser, reuse: bool) -> None:
        super().__init__(inner.hub, inner.config.model_copy(update={"reuse_captures": reuse}))
        self.last_observation: Observation | None = None
        self.last_observe_ms = 0.0

    async def observe(self, tab_id: int) -> Observation:
        started = time.perf_counter()
        observation = await super().observe(tab_id)
        self.last_observe_ms = (time.perf_counter() - started) * 1000
        self.last_observation = observation
        return observation


async def full_path(env: BrowserEnv, browser: TimedBrowser) -> FullSample:
    started = time.perf_counter()
    view = await env.observe()
    full_ms = (time.perf_counter() - started) * 1000
    observation = browser.last_observation
    if observation is None or view.page is None:
        raise RuntimeError(f"no page observed at {view.url} (dialog: {view.dialog})")
    return FullSample(full_ms, browser.last_observe_ms, observation.capture_ms, view, observation)


def _raw_ax_tree(driver: webdriver.Chrome) -> tuple[float, dict[str, Any]]:
    # Timed inside the worker thread so the hop from the event loop is not counted.
    started = time.perf_counter()
    result = driver.execute_cdp_cmd("Accessibility.getFullAXTree", {})
    return (time.perf_counter() - started) * 1000, result


async def raw_path(driver: webdriver.Chrome) -> tuple[float, dict[str, Any]]:
    # Selenium blocks; a thread keeps the backend's event loop (and the extension's keepalive) running.
    return await asyncio.to_thread(_raw_ax_tree, driver)


def _open_selenium_tab(driver: webdriver.Chrome, url: str) -> int:
    driver.switch_to.new_window("tab")
    driver.get(url)
    return int(driver.execute_script("return document.querySelectorAll('*').length"))


def _close_selenium_tab(driver: webdriver.Chrome, home: str) -> None:
    driver.close()
    driver.switch_to.window(home)


async def bench_page(session: Session, driver: webdriver.Chrome, target: int, url: str, runs: int) -> PageResult:
    fresh_browser, reusing_browser = TimedBrowser(session.browser, False), TimedBrowser(session.browser, True)
    # Each path in a tab of its own: the extension keeps one capture per tab, and a fresh capture replaces it.
    tab, second = await fresh_browser.open_tab(url), await reusing_browser.open_tab(url)
    home = driver.current_window_handle
    dom_elements = await asyncio.to_thread(_open_selenium_tab, driver, url)
    try:
        fresh, reusing = BrowserEnv(fresh_browser, tab.tab_id), BrowserEnv(reusing_browser, second.tab_id)
        # Unrecorded runs first: the first AX request builds Chromium's accessibility cache, and the reusing path
        # observes until its page holds still (the debugger's infobar shrinks the viewport once after attaching).
        await full_path(fresh, fresh_browser)
        for _ in range(20):
            if (await full_path(reusing, reusing_browser)).observation.reused:
                break
            await asyncio.sleep(0.1)
        await raw_path(driver)
        fulls: list[FullSample] = []
        reused: list[FullSample] = []
        raws: list[float] = []
        raw_result: dict[str, Any] = {}
        order = ("full", "reused", "raw")
        for i in range(runs):
            # Rotate which path goes first so drift and noise on this 2-core machine hit all alike.
            for which in order[i % 3:] + order[:i % 3]:
                if which == "full":
                    fulls.append(await full_path(fresh, fresh_browser))
                elif which == "reused":
                    sample = await full_path(reusing, reusing_browser)
                    if not sample.observation.reused:
                        raise RuntimeError(f"the unchanged page at {url} was captured again")
                    reused.append(sample)
                else:
                    raw_ms, raw_result = await raw_path(driver)
                    raws.append(raw_ms)
    finally:
        await asyncio.to_thread(_close_selenium_tab, driver, home)
        await session.browser.close_tab(tab.tab_id)
        await session.browser.close_tab(second.tab_id)
    return summarize(target, url, dom_elements, fulls, reused, raws, raw_result)


def summarize(target: int, url: str, dom_elements: int, fulls: list[FullSample], reused: list[FullSample],
              raws: list[float], raw_result: dict[str, Any]) -> PageResult:
    last = fulls[-1]
    text = last.view.text
    full_ms = Stats.of([s.full_ms for s in fulls])
    reused_ms = Stats.of([s.full_ms for s in reused])
    raw_ms = Stats.of(raws)
    webarena = webarena_text.serialize(raw_result.get("nodes", []))
    theirs, ours = webarena_text.interactive(webarena), webarena_text.interactive(text)
    missing = theirs - ours
    return PageResult(
        target_elements=target,
        url=url,
        dom_elements=dom_elements,
        runs=len(fulls),
        full_ms=full_ms,
        observe_ms=Stats.of([s.observe_ms for s in fulls]),
        capture_ms=Stats.of([s.capture_ms for s in fulls]),
        transfer_ms=Stats.of([s.transfer_ms for s in fulls]),
        process_ms=Stats.of([s.process_ms for s in fulls]),
        raw_ms=raw_ms,
        ratio_full_to_raw=full_ms.median / raw_ms.median,
        reused_ms=reused_ms,
        ratio_reused_to_raw=reused_ms.median / raw_ms.median,
        raw_ax_nodes=len(raw_result.get("nodes", [])),
        raw_ax_json_bytes=len(json.dumps(raw_result, separators=(",", ":"), ensure_ascii=False).encode()),
        observed_ax_nodes=last.view.raw_node_count,
        validated_json_bytes=len(last.observation.model_dump_json(exclude_none=True).encode()),
        text_lines=len(text.splitlines()),
        text_chars=len(text),
        text_tokens=len(text) // CHARS_PER_TOKEN,
        tokenizer=TOKENIZER_LABEL,
        webarena_text_tokens=len(webarena) // CHARS_PER_TOKEN,
        ratio_tokens_to_webarena=len(text) / max(len(webarena), 1),
        webarena_interactive=sum(theirs.values()),
        missing_interactive=[f"{role} '{name}' x{n}" for (role, name), n in sorted(missing.items())],
    )


@contextlib.asynccontextmanager
async def attached_driver(session: Session) -> AsyncIterator[webdriver.Chrome]:
    """Selenium on the Chromium the session launched (attaching avoids chromedriver's launch hang, docs/platform.md)."""
    assert session.chromium is not None
    driver = await asyncio.to_thread(attach_selenium, session.chromium.debugger_address)
    try:
        yield driver
    finally:
        await asyncio.to_thread(driver.quit)


async def run_benchmark(sizes: Sequence[int], runs: int) -> BenchReport:
    with tempfile.TemporaryDirectory(prefix="branchwise-bench-") as tmp:
        root = Path(tmp)
        (root / "site").mkdir()
        names = write_pages(root / "site", list(sizes))
        config = ServerConfig(port=0, data_dir=root / "data")
        with serve(root / "site") as base_url:
            async with open_session(config, ChromiumConfig(headless=True)) as session, \
                    attached_driver(session) as driver:
                chromium = str(driver.capabilities.get("browserVersion", "unknown"))
                results = []
                for target in sizes:
                    log.info("benchmarking the ~%d-element page", target)
                    results.append(await bench_page(session, driver, target, f"{base_url}/{names[target]}", runs))
    return BenchReport(chromium=chromium, cpus=os.cpu_count() or 0, python=platform.python_version(), runs=runs,
                       pages=results)


def _timing(stats: Stats) -> str:
    return f"{stats.median:,.0f} [{stats.min:,.0f}–{stats.max:,.0f}]"


def format_report(report: BenchReport) -> str:
    rows: list[tuple[str, list[str]]] = [
        ("DOM elements (querySelectorAll)", [f"{p.dom_elements:,}" for p in report.pages]),
        ("Full path, BrowserEnv.observe() ms", [_timing(p.full_ms) for p in report.pages]),
        ("  extension capture (capture_ms)", [_timing(p.capture_ms) for p in report.pages]),
        ("  transfer + validation", [_timing(p.transfer_ms) for p in report.pages]),
        ("  backend process()", [_timing(p.process_ms) for p in report.pages]),
        ("Raw getFullAXTree via Selenium ms", [_timing(p.raw_ms) for p in report.pages]),
        ("Ratio full / raw (medians)", [f"{p.ratio_full_to_raw:.2f}x" for p in report.pages]),
        ("Full path, page unchanged (reused) ms", [_timing(p.reused_ms) for p in report.pages]),
        ("Ratio unchanged / raw (medians)", [f"{p.ratio_reused_to_raw:.3f}x" for p in report.pages]),
        ("Raw AX nodes (Selenium)", [f"{p.raw_ax_nodes:,}" for p in report.pages]),
        ("AX nodes received by the backend", [f"{p.observed_ax_nodes:,}" for p in report.pages]),
        ("Raw AX JSON bytes (= wire frame)", [f"{p.raw_ax_json_bytes:,}" for p in report.pages]),
        ("Observation JSON after validation", [f"{p.validated_json_bytes:,}" for p in report.pages]),
        ("Text lines", [f"{p.text_lines:,}" for p in report.pages]),
        ("Text characters", [f"{p.text_chars:,}" for p in report.pages]),
        ("Text tokens (approx., chars/4)", [f"{p.text_tokens:,}" for p in report.pages]),
        ("Approx. tokens per raw AX node", [f"{p.text_tokens / max(p.raw_ax_nodes, 1):.2f}" for p in report.pages]),
        ("WebArena's text, tokens (approx.)", [f"{p.webarena_text_tokens:,}" for p in report.pages]),
        ("Ratio our tokens / WebArena's", [f"{p.ratio_tokens_to_webarena:.2f}x" for p in report.pages]),
        ("Interactive elements in WebArena's", [f"{p.webarena_interactive:,}" for p in report.pages]),
        ("  of those not in our text", [f"{len(p.missing_interactive):,}" for p in report.pages]),
    ]
    headers = [f"~{p.target_elements:,} elements" for p in report.pages]
    label_width = max(len(label) for label, _ in rows)
    widths = [max(len(h), *(len(values[i]) for _, values in rows)) for i, h in enumerate(headers)]
    lines = [
        f"Observe benchmark: Chromium {report.chromium}, {report.cpus} CPUs, Python {report.python}, "
        f"{report.runs} interleaved runs per path; times in ms as median [min–max]",
        "",
        " " * label_width + "  " + "  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)),
    ]
    for label, values in rows:
        cells = "  ".join(v.rjust(w) for v, w in zip(values, widths, strict=True))
        lines.append(label.ljust(label_width) + "  " + cells)
    for page in report.pages:
        if page.missing_interactive:
            lines.append(f"~{page.target_elements:,} elements, interactive in WebArena's text, not in ours: "
                         + "; ".join(page.missing_interactive[:20]))
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m branchwise.bench.observe", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="measured runs per path and page (default 10)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES),
                        help="target element counts of the generated pages (default 1000 6500)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this JSON file")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run_and_report(run_benchmark(args.sizes, args.runs), format_report, verbose=args.verbose,
                          json_path=args.json)


if __name__ == "__main__":
    sys.exit(main())
