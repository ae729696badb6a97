"""Runs started from the side panel while `branchwise serve` is up: one task each, stoppable."""

from __future__ import annotations

import asyncio
import logging

from .agent.base import Agent
from .agent.env import BrowserEnv, EnvConfig
from .agent.records import RunResult
from .agent.reporting import Reporters, RunReporter, SidePanelReporter
from .browser import Browser
from .models import ModelSetup
from .protocol import StartRun, StopRun, new_id
from .safety.secrets import mask_task

log = logging.getLogger(__name__)


class RunManager:
    def __init__(self, browser: Browser, model: ModelSetup, agent: Agent, env_config: EnvConfig,
                 terminal: RunReporter | None = None) -> None:
        self.browser = browser
        self.model = model
        self.agent = agent
        self.env_config = env_config
        self.terminal = terminal
        self.tasks: dict[str, asyncio.Task[RunResult]] = {}

    def attach(self) -> None:
        self.browser.hub.start_run_handler = self.start
        self.browser.hub.stop_run_handler = self.stop

    async def start(self, message: StartRun) -> str:
        if any(not t.done() for t in self.tasks.values()):
            raise RuntimeError("a run is already in progress; stop it first")
        run_id = new_id()
        env = BrowserEnv(self.browser, message.tab_id, self.env_config)
        panel = SidePanelReporter(self.browser.hub, scripted_model=self.model.scripted)
        reporter = Reporters(panel, self.terminal) if self.terminal else panel
        task = asyncio.create_task(self.agent.run(message.task, env, reporter, run_id=run_id))
        self.tasks[run_id] = task
        log.info("run %s started from the side panel on tab %d: %s", run_id, message.tab_id,
                 mask_task(message.task))
        return run_id

    async def stop(self, message: StopRun) -> None:
        task = self.tasks.get(message.run_id)
        if task is not None and not task.done():
            log.info("run %s stopped by the user", message.run_id)
            task.cancel()
