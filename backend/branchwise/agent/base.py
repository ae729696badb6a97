"""The one interface every agent (greedy or search) offers to the CLI and the side panel's run manager."""

from __future__ import annotations

from typing import Protocol

from .env import BrowserEnv
from .records import RunResult
from .reporting import RunReporter


class Agent(Protocol):
    async def run(self, task: str, env: BrowserEnv, reporter: RunReporter, *, run_id: str | None = None) -> RunResult:
        ...
