"""Where a run's progress goes as it happens: the terminal, the side panel, or several at once."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TextIO

from ..link import ExtensionHub, LinkClosed
from ..protocol import RunUpdate, TreeUpdate
from .records import RunResult, StepRecord

log = logging.getLogger(__name__)


class RunReporter(Protocol):
    async def started(self, run_id: str, task: str) -> None: ...

    async def step(self, run_id: str, record: StepRecord) -> None: ...

    async def finished(self, result: RunResult) -> None: ...

    async def progress(self, run_id: str, text: str) -> None:
        """A line about search progress (expanding, scoring, backtracking)."""

    async def tree(self, update: TreeUpdate) -> None:
        """The search tree as it is now."""


def write_line(out: TextIO, text: str) -> None:
    """A line to the terminal; one that closed (a hung-up ssh session, SIGHUP) loses the line, not the run's end."""
    try:
        out.write(text + "\n")
        out.flush()
    except OSError as exc:
        log.debug("terminal line dropped (%s): %s", exc, text)


class TerminalReporter:
    def __init__(self, out: TextIO = sys.stdout, scripted_model: bool = False) -> None:
        self.out = out
        self.scripted_model = scripted_model

    def _print(self, text: str) -> None:
        write_line(self.out, text)

    async def started(self, run_id: str, task: str) -> None:
        label = " [scripted model]" if self.scripted_model else ""
        self._print(f"Run {run_id}{label}: {task}")

    async def step(self, run_id: str, record: StepRecord) -> None:
        line = f"  step {record.index}: {record.action or '(no action)'}  — {record.url}"
        if record.error:
            line += f"\n           ! {record.error}"
        if not record.settled and record.settle_ms is not None:
            line += f"\n           · the page was still busy after {record.settle_ms / 1000:.1f} s: read as it was then"
        self._print(line)

    async def progress(self, run_id: str, text: str) -> None:
        self._print(f"  · {text}")

    async def tree(self, update: TreeUpdate) -> None:
        """The terminal shows progress lines; the whole tree is printed by `branchwise show`."""

    async def finished(self, result: RunResult) -> None:
        if result.status == "finished":
            self._print(f"Answer: {result.answer}")
        else:
            self._print(f"Run {result.status}: {result.reason}")
        u = result.usage
        self._print(f"({len(result.steps)} steps, {u.calls} model calls, {u.prompt_tokens} prompt + "
                    f"{u.completion_tokens} completion tokens)")


class SidePanelReporter:
    """Sends run updates to the extension, which shows them in the side panel. A missing panel loses nothing else."""

    def __init__(self, hub: ExtensionHub, scripted_model: bool = False) -> None:
        self.hub = hub
        self.scripted_model = scripted_model
        self.task = ""

    async def _send(self, update: RunUpdate | TreeUpdate) -> None:
        link = self.hub.link
        if link is None:
            return
        try:
            await link.send(update)
        except LinkClosed:
            log.info("side panel update dropped: the extension is not connected")

    async def started(self, run_id: str, task: str) -> None:
        self.task = task
        await self._send(RunUpdate(run_id=run_id, task=task, status="started", scripted_model=self.scripted_model))

    async def step(self, run_id: str, record: StepRecord) -> None:
        await self._send(RunUpdate(
            run_id=run_id, task=self.task, status="step", step=record.index, url=record.url, thought=record.thought,
            action=record.action, message=record.error, scripted_model=self.scripted_model,
        ))

    async def progress(self, run_id: str, text: str) -> None:
        """Into the run's log in the panel: among the lines, a denied action and what the planner does about it."""
        await self.progress_of(run_id, self.task, text)

    async def progress_of(self, run_id: str, task: str, text: str) -> None:
        """A line into the log of a run this reporter did not start (the manager's, after the panel reconnected)."""
        await self._send(RunUpdate(run_id=run_id, task=task, status="progress", message=text,
                                   scripted_model=self.scripted_model))

    async def tree(self, update: TreeUpdate) -> None:
        await self._send(update)

    async def finished(self, result: RunResult) -> None:
        await self._send(RunUpdate(
            run_id=result.run_id, task=result.task, status=result.status, answer=result.answer, message=result.reason,
            scripted_model=self.scripted_model,
        ))

    async def interrupted(self, run_id: str, task: str, why: str, resumable: bool) -> None:
        """A run the backend's exit cut short, offered to go on with (`resumable`) or shown with why it cannot."""
        await self._send(RunUpdate(run_id=run_id, task=task, status="interrupted", message=why, resumable=resumable,
                                   scripted_model=self.scripted_model))


class ResultFile:
    """`--json`: the result written to `path` when the run ends, however it ends (a stop or SIGTERM too), as
    `shape` gives it (the model named)."""

    def __init__(self, path: Path, shape: Callable[[RunResult], RunResult] = lambda result: result,
                 out: TextIO = sys.stdout) -> None:
        self.path = path
        self.shape = shape
        self.out = out

    async def started(self, run_id: str, task: str) -> None:
        pass

    async def step(self, run_id: str, record: StepRecord) -> None:
        pass

    async def progress(self, run_id: str, text: str) -> None:
        pass

    async def tree(self, update: TreeUpdate) -> None:
        pass

    async def finished(self, result: RunResult) -> None:
        try:
            self.path.write_text(self.shape(result).model_dump_json(indent=2), encoding="utf-8")
        except OSError as exc:
            log.error("the result could not be written to %s: %s", self.path, exc)
            return
        write_line(self.out, f"Result written to {self.path}")


class Reporters:
    """Fans one run's progress out to several reporters."""

    def __init__(self, *reporters: RunReporter) -> None:
        self.reporters = reporters

    async def started(self, run_id: str, task: str) -> None:
        for r in self.reporters:
            await r.started(run_id, task)

    async def step(self, run_id: str, record: StepRecord) -> None:
        for r in self.reporters:
            await r.step(run_id, record)

    async def finished(self, result: RunResult) -> None:
        for r in self.reporters:
            await r.finished(result)

    async def progress(self, run_id: str, text: str) -> None:
        for r in self.reporters:
            await r.progress(run_id, text)

    async def tree(self, update: TreeUpdate) -> None:
        for r in self.reporters:
            await r.tree(update)
