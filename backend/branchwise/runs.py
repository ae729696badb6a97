"""Runs started from the side panel while `branchwise serve` is up: one task each, stoppable; and the runs a crash cut
short, offered to the panel when the extension connects and resumed from it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .agent.env import BrowserEnv, EnvConfig
from .agent.records import RunResult
from .agent.reporting import Reporters, RunReporter, SidePanelReporter
from .browser import Browser
from .core.tasks import cancel_once, stop_all
from .link import RunRefused
from .models import ModelSetup
from .protocol import DemoList, DemoSummary, ListDemos, ResumeRun, StartRun, StopRun, new_id
from .safety.secrets import mask_task
from .search.agent import SearchAgent
from .search.examples import site_of
from .search.resume import ResumePoint, Unresumable, require_open_tab, resume_point
from .store import RunNotFound, RunStore

log = logging.getLogger(__name__)

# How many of the newest interrupted runs the panel is told of, and of a site's newest demonstrations.
OFFERED_RUNS = 3
LISTED_DEMOS = 20


class RunManager:
    def __init__(self, browser: Browser, model: ModelSetup, agent: SearchAgent, env_config: EnvConfig,
                 agent_for: Callable[[ResumePoint], SearchAgent], terminal: RunReporter | None = None,
                 store: RunStore | None = None) -> None:
        self.browser = browser
        self.model = model
        self.agent = agent
        # The agent for a resumed run, planning as the run was started (its strategy, profile, temperature, limits).
        self.agent_for = agent_for
        self.env_config = env_config
        self.terminal = terminal
        # Where interrupted runs are found (None: none are offered or resumed).
        self.store = store
        self.tasks: dict[str, asyncio.Task[RunResult]] = {}
        # Each run's task as the panel may show it (masked).
        self.shown_tasks: dict[str, str] = {}
        # Set once the backend stops (shutdown): no run starts after.
        self.closing = False
        self._unlisten: Callable[[], None] | None = None

    def attach(self) -> None:
        hub = self.browser.hub
        hub.start_run_handler = self.start
        hub.stop_run_handler = self.stop
        hub.resume_run_handler = self.resume
        hub.list_demos_handler = self.list_demos
        self._unlisten = hub.add_link_listener(self.offer)

    def detach(self) -> None:
        """The backend takes no more runs from the side panel through this manager."""
        hub = self.browser.hub
        hub.start_run_handler = hub.stop_run_handler = hub.resume_run_handler = None
        hub.list_demos_handler = None
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None

    def _panel(self) -> SidePanelReporter:
        return SidePanelReporter(self.browser.hub, scripted_model=self.model.scripted)

    def _busy(self) -> None:
        if any(not t.done() for t in self.tasks.values()):
            raise RunRefused("a run is already in progress; stop it first")

    def _launch(self, agent: SearchAgent, run_id: str, task: str, tab_id: int,
                resume: ResumePoint | None = None) -> None:
        if self.closing:  # a resume asked for before the backend began to stop, and reaching here after
            raise RunRefused("the backend is stopping")
        env = BrowserEnv(self.browser, tab_id, self.env_config)
        panel = self._panel()
        reporter = Reporters(panel, self.terminal) if self.terminal else panel
        self.tasks[run_id] = asyncio.create_task(agent.run(task, env, reporter, run_id=run_id, resume=resume))
        self.shown_tasks[run_id] = mask_task(task)

    async def start(self, message: StartRun) -> str:
        self._busy()
        run_id = new_id()
        self._launch(self.agent, run_id, message.task, message.tab_id)
        log.info("run %s started from the side panel on tab %d: %s", run_id, message.tab_id,
                 mask_task(message.task))
        return run_id

    async def shutdown(self, why: tuple[object, ...] = ()) -> None:
        """The backend is stopping: no more runs are taken, the running ones are cancelled with `why` (the cancel's
        message: TERMINATED records them interrupted, to be resumed; none, stopped by the user) and waited for, so
        that each ends on record before the store and the browser close."""
        self.detach()
        self.closing = True
        # A run the user stopped is already ending: it is waited for, not cancelled again.
        await stop_all(self.tasks.values(), why)

    async def stop(self, message: StopRun) -> None:
        task = self.tasks.get(message.run_id)
        # Stop clicked twice: the run is already writing its end.
        if task is not None and cancel_once(task):
            log.info("run %s stopped by the user", message.run_id)

    async def _resumable(self, run_id: str, open_tabs: set[int]) -> ResumePoint:
        """Where the run can go on from; Unresumable says why it cannot (from the panel, a task with a secret in it
        cannot be given again: that is `branchwise resume --task`)."""
        if self.store is None:
            raise Unresumable("this backend keeps no runs")
        point = resume_point(await asyncio.to_thread(self.store.load_run, run_id))
        require_open_tab(point, open_tabs)
        return point

    async def list_demos(self, message: ListDemos) -> DemoList:
        """What exploring taught about the site of the panel's tab (`branchwise explore`), newest first."""
        site = site_of(message.url)
        if self.store is None or not site:
            return DemoList(site=site)
        demos = await asyncio.to_thread(self.store.demonstrations, site, LISTED_DEMOS)
        return DemoList(site=site, demos=[
            DemoSummary(demo_id=d.demo_id or 0, instruction=d.instruction, score=d.score, steps=len(d.steps),
                        persona=d.persona) for d in demos])

    async def offer(self) -> None:
        """The extension connected: tell the side panel of the runs going on here (it marked them cut off when its
        connection closed) and of the newest runs a crash cut short: each can go on (its tab is still open) or says
        why not. A failure is only logged: the connection works without it."""
        try:
            await self._announce_running()
            await self._offer()
        except Exception:
            log.exception("could not tell the side panel of the runs going on or cut short")

    async def _announce_running(self) -> None:
        panel = self._panel()
        for run_id, task in self.tasks.items():
            if not task.done():
                await panel.progress_of(run_id, self.shown_tasks.get(run_id, ""),
                                        "The side panel is connected again; the run goes on.")

    async def _offer(self) -> None:
        if self.store is None:
            return
        runs = [r for r in await asyncio.to_thread(self.store.list_runs, 50) if r.status == "interrupted"]
        if not runs:
            return
        # Newest interruption first: a resumed run cut short again is the one the panel still shows as running.
        runs.sort(key=lambda r: r.finished_at or r.started_at, reverse=True)
        open_tabs = {t.tab_id for t in await self.browser.list_tabs()}
        panel = self._panel()
        for summary in runs[:OFFERED_RUNS]:
            try:
                await self._resumable(summary.run_id, open_tabs)
            except Unresumable as exc:
                await panel.interrupted(summary.run_id, summary.task, f"Cut short by a backend exit; {exc}.", False)
            else:
                await panel.interrupted(summary.run_id, summary.task, "Cut short by a backend exit: it can go on in "
                                        "the tab it worked in.", True)

    async def resume(self, message: ResumeRun) -> str:
        self._busy()
        if self.closing:  # else the run would be reopened, then refused by _launch
            raise RunRefused("the backend is stopping")
        open_tabs = {t.tab_id for t in await self.browser.list_tabs()}
        try:
            point = await self._resumable(message.run_id, open_tabs)
            agent = self.agent_for(point)
            assert self.store is not None  # _resumable needs it
            await asyncio.to_thread(self.store.reopen_run, point.stored.run.run_id)
        except (Unresumable, RunNotFound) as exc:
            raise RunRefused(str(exc)) from None
        self._launch(agent, point.stored.run.run_id, point.stored.run.task, point.tab_id, point)
        log.info("run %s resumed from the side panel in tab %d", point.stored.run.run_id, point.tab_id)
        return point.stored.run.run_id
