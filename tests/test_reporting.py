"""Where a run's end goes besides the store: the terminal, which may have gone, and the --json file."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import pytest

from branchwise.agent.records import RunResult
from branchwise.agent.reporting import Reporters, ResultFile, TerminalReporter


class HungUp(io.StringIO):
    """A terminal whose session closed: every write fails as a tty's does after SIGHUP."""

    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")


def interrupted() -> RunResult:
    return RunResult(run_id="r1", task="add the book", status="interrupted", reason="told to stop")


def test_a_closed_terminal_loses_its_lines_and_the_json_is_still_written(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    out = io.StringIO()
    reporters = Reporters(TerminalReporter(HungUp()),
                          ResultFile(path, lambda r: r.model_copy(update={"model": "qwen"}), out=out))
    asyncio.run(reporters.finished(interrupted()))
    written = RunResult.model_validate_json(path.read_text())
    assert (written.status, written.reason, written.model) == ("interrupted", "told to stop", "qwen")
    assert out.getvalue() == f"Result written to {path}\n"


def test_a_result_file_that_cannot_be_written_is_said_and_the_run_ends_anyway(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "missing" / "result.json"
    out = io.StringIO()
    asyncio.run(ResultFile(path, out=out).finished(interrupted()))
    assert not path.exists() and out.getvalue() == ""
    assert any(r.levelno == logging.ERROR and f"could not be written to {path}" in r.getMessage()
               for r in caplog.records)
