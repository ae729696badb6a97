"""The observe benchmark runs end to end on the small page and reports sane numbers (no timing assertions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from branchwise.bench.observe import BenchReport
from branchwise.bench.search import SearchBenchReport

pytestmark = pytest.mark.e2e


def test_observe_benchmark_reports_sane_numbers(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    # As a subprocess: the benchmark is a command-line program with its own event loop and browser.
    done = subprocess.run(
        [sys.executable, "-m", "branchwise.bench.observe", "--runs", "1", "--sizes", "1000", "--json", str(out)],
        capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Full path, BrowserEnv.observe()" in done.stdout and "Raw getFullAXTree" in done.stdout

    report = BenchReport.model_validate_json(out.read_text())
    assert report.runs == 1 and report.chromium != "unknown"
    (page,) = report.pages
    assert 900 <= page.dom_elements <= 1100
    for stats in (page.full_ms, page.observe_ms, page.capture_ms, page.raw_ms):
        assert 0 < stats.min <= stats.median <= stats.max
    assert page.process_ms.median > 0 and page.ratio_full_to_raw > 0
    # The extension sees the same page Selenium does.
    assert page.raw_ax_nodes > page.dom_elements
    assert abs(page.observed_ax_nodes - page.raw_ax_nodes) <= 0.05 * page.raw_ax_nodes
    assert page.raw_ax_json_bytes > page.validated_json_bytes > page.text_chars
    assert 0 < page.text_lines < page.raw_ax_nodes
    # The token count is the benchmark's own estimate (it names it): the table prints what the JSON holds, and a token
    # stands for more than one character.
    assert page.tokenizer
    rows = {label: line.split()[-1] for line in done.stdout.splitlines()
            for label in ("Text characters", "Text tokens") if line.startswith(label)}
    assert rows == {"Text characters": f"{page.text_chars:,}", "Text tokens": f"{page.text_tokens:,}"}, done.stdout
    assert 0 < page.text_tokens < page.text_chars
    # The point of processing: the text costs a few tokens per raw node, not the ~400 bytes each node weighs raw.
    assert page.text_tokens < 5 * page.raw_ax_nodes
    assert page.text_chars * 10 < page.raw_ax_json_bytes
    # The unchanged page was measured as reused (the benchmark stops if a capture is taken again), and our text is
    # sized against WebArena's on the same raw tree without losing an interactive element it shows.
    assert 0 < page.reused_ms.min <= page.reused_ms.median <= page.reused_ms.max and page.ratio_reused_to_raw > 0
    assert 0 < page.text_tokens < page.webarena_text_tokens and page.webarena_interactive > 0
    assert page.missing_interactive == [], page.missing_interactive


def test_search_benchmark_compares_speculative_and_naive_backtracking(tmp_path: Path) -> None:
    out = tmp_path / "search.json"
    done = subprocess.run([sys.executable, "-m", "branchwise.bench.search", "--repeats", "1", "--json", str(out)],
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "speculative / naive" in done.stdout

    report = SearchBenchReport.model_validate_json(out.read_text())
    runs = {(r.scenario, r.mode): r for r in report.runs}
    assert len(runs) == 4
    for run in runs.values():
        assert run.backtracks and all(b.wall_ms > 0 and b.env_actions >= 1 for b in run.backtracks)
        assert run.search_steps > 0 and run.loop_cpu_ms > 0
    # The reload-changing start page is no checkpoint: in both modes the backtrack is refused before anything is
    # replayed (naive replay used to reset the working tab onto a changed page), and the run still answers.
    for mode in ("speculative", "naive"):
        assert [b.outcome for b in runs[("page changes on reload", mode)].backtracks] == ["aborted"]
        assert runs[("page changes on reload", mode)].status == "finished"
