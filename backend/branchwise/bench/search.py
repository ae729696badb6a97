"""Search benchmark: what a backtrack costs, speculative against naive, and the backend's own CPU per search step.

    python -m branchwise.bench.search [--repeats 3] [--json PATH]

Runs the two backtracking scenarios of the e2e tests (a dead end, then a backtrack to an earlier state; and a start
page that changes on reload, which is found to be no checkpoint, so the backtrack is refused before anything is
replayed) with `action_aware`, once per backtracking mode, interleaved, in one Chromium and against a
fresh shop each time. For every backtrack it reports the browser actions (tabs opened, navigations, replayed actions)
and the wall time; for every run, the CPU time of the backend's event-loop thread per search step. That thread runs
the WebSocket link, observation processing and the search itself; the browser and the scripted model run elsewhere,
so waiting on them costs it no CPU. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, SecretStr

from ..agent.env import BrowserEnv
from ..agent.reporting import TerminalReporter
from ..config import ServerConfig
from ..core.status import BacktrackMode
from ..launcher import ChromiumConfig
from ..llm import LLMClient, LLMConfig
from ..sandbox import DEALS_PATH, ShopConfig, ShopServer
from ..scripted_model import Script, ScriptedModelServer
from ..search.agent import SearchAgent, SearchConfig
from ..search.roles import ModelRoles
from ..session import Session, open_session
from ..store import RunStore
from .scenarios import DEAL_TASK, GARDEN_TASK, deals_script, garden_script

log = logging.getLogger(__name__)

MODES: tuple[BacktrackMode, ...] = ("speculative", "naive")


class Scenario(BaseModel):
    name: str
    task: str
    path: str
    script: Callable[[], Script]


SCENARIOS = (
    Scenario(name="dead end, then back", task=GARDEN_TASK, path="/", script=garden_script),
    Scenario(name="page changes on reload", task=DEAL_TASK, path=DEALS_PATH, script=deals_script),
)


class BacktrackSample(BaseModel):
    outcome: str
    env_actions: int
    replayed: int
    wall_ms: float


class RunSample(BaseModel):
    scenario: str
    mode: BacktrackMode
    status: str
    answer: str
    reason: str
    backtracks: list[BacktrackSample]
    search_steps: int
    wall_s: float
    loop_cpu_ms: float

    @property
    def cpu_ms_per_step(self) -> float:
        return self.loop_cpu_ms / max(1, self.search_steps)


class SearchBenchReport(BaseModel):
    repeats: int
    runs: list[RunSample]


async def run_once(session: Session, scenario: Scenario, mode: BacktrackMode, work: Path) -> RunSample:
    with ShopServer(ShopConfig(db_path=work / "shop.sqlite3")) as shop, \
            ScriptedModelServer(scenario.script()) as model:
        tab = await session.browser.open_tab(shop.base_url + scenario.path)
        env = BrowserEnv(session.browser, tab.tab_id)
        config = LLMConfig(base_url=model.base_url, api_key=SecretStr("bench"), model="scripted")
        async with LLMClient(config) as client:
            with RunStore(work / "runs.sqlite3") as store:
                agent = SearchAgent(ModelRoles.shared(client), session.browser,
                                    SearchConfig(strategy="action_aware", backtrack=mode), store=store)
                cpu, wall = time.thread_time(), time.perf_counter()
                result = await agent.run(scenario.task, env, TerminalReporter(io.StringIO()))
                cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
                stored = store.load_run(result.run_id)
        for leftover in await session.browser.list_tabs():
            await session.browser.close_tab(leftover.tab_id)
    # A search step: one pass of the planner's loop, which expands a node or executes an action (or both).
    steps = sum(1 for n in stored.nodes if n.status in ("expanded", "terminal") or n.parent_id is not None)
    return RunSample(
        scenario=scenario.name, mode=mode, status=result.status, answer=result.answer, reason=result.reason,
        backtracks=[BacktrackSample(outcome=b.outcome, env_actions=b.env_actions, replayed=b.replayed_actions,
                                    wall_ms=b.wall_ms) for b in stored.backtracks],
        search_steps=steps, wall_s=wall, loop_cpu_ms=cpu * 1000,
    )


async def bench(repeats: int) -> SearchBenchReport:
    runs: list[RunSample] = []
    with tempfile.TemporaryDirectory(prefix="branchwise-bench-search-") as tmp:
        async with open_session(ServerConfig(port=0, data_dir=Path(tmp) / "data"),
                                ChromiumConfig(headless=True)) as session:
            for repeat in range(repeats):
                for scenario in SCENARIOS:
                    for mode in MODES:
                        work = Path(tmp) / f"{repeat}-{scenario.path.strip('/') or 'home'}-{mode}"
                        work.mkdir()
                        runs.append(await run_once(session, scenario, mode, work))
                        log.info("%s / %s: %s", scenario.name, mode, runs[-1].status)
    return SearchBenchReport(repeats=repeats, runs=runs)


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def render(report: SearchBenchReport) -> str:
    lines = [f"Search benchmark: action_aware, {report.repeats} repeat(s), median per backtrack / per run", "",
             "| scenario | backtrack | run result | backtracks (outcome) | browser actions / backtrack "
             "| wall ms / backtrack | search steps | backend CPU ms / step |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for scenario in SCENARIOS:
        for mode in MODES:
            runs = [r for r in report.runs if r.scenario == scenario.name and r.mode == mode]
            backtracks = [b for r in runs for b in r.backtracks]
            outcomes = sorted({b.outcome for b in backtracks})
            results = sorted({r.status + (f" ({r.answer})" if r.answer else f" ({r.reason[:60]})") for r in runs})
            lines.append(
                f"| {scenario.name} | {mode} | {'; '.join(results)} | "
                f"{len(backtracks) / max(1, len(runs)):.0f} ({', '.join(outcomes) or 'none'}) | "
                f"{_median([float(b.env_actions) for b in backtracks])} | {_median([b.wall_ms for b in backtracks])} | "
                f"{_median([float(r.search_steps) for r in runs])} | {_median([r.cpu_ms_per_step for r in runs])} |"
            )
    spec = [b.wall_ms for r in report.runs if r.mode == "speculative" for b in r.backtracks]
    naive = [b.wall_ms for r in report.runs if r.mode == "naive" for b in r.backtracks]
    if spec and naive:
        lines += ["", f"Wall time per backtrack, speculative / naive: "
                      f"{statistics.median(spec) / statistics.median(naive):.2f}x (medians, same run)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    report = asyncio.run(bench(args.repeats))
    sys.stdout.write(render(report) + "\n")
    if args.json is not None:
        args.json.write_text(json.dumps(report.model_dump(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
