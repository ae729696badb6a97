"""`branchwise eval`: each task on freshly seeded sandbox sites, in its own Chromium with the extension and its own
backend, through the real pipeline; evaluated as WebArena evaluates it, and appended to a JSONL file as it finishes.

Running the same command again resumes: tasks already in the results file for the same strategy and model are skipped.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from ..agent.env import BrowserEnv
from ..agent.records import RunResult
from ..agent.reporting import Reporters
from ..config import ServerConfig
from ..core.approval import PolicyApprover
from ..core.budget import Limits
from ..core.mistakes import MistakeCounts
from ..core.status import BacktrackMode, ResultStatus
from ..core.tasks import gather_all
from ..core.usage import Usage
from ..launcher import ChromiumConfig
from ..llm import LLMError
from ..models import ModelSetup
from ..search.agent import SearchAgent, SearchConfig
from ..search.profiles import DEFAULT_PROFILE, search_config
from ..session import open_session
from ..store import ModelCallRecord, RunStore, default_store_path
from .evaluators import EvalTools, EvaluationError, RunOutcome, evaluate
from .logins import LOGINS, LoginFailed, log_in
from .reader import BrowserPageReader
from .sandboxes import fresh_sites
from .sites import SiteUrls
from .tasks import EvalType, TaskConfig

log = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"


class EvalOptions(BaseModel):
    strategy: str = "greedy"
    backtrack: BacktrackMode = "speculative"
    max_steps: int = Field(default=30, ge=1)
    # What every question about a destructive action is answered: recorded with each result.
    approve: bool = False
    # How each task's Chromium is launched (headless, which binary).
    chromium: ChromiumConfig = ChromiumConfig()
    profile: str = DEFAULT_PROFILE
    # The user's own limits, over the profile's.
    limits: Limits = Limits()
    # Retrieved steps in every prompt, from the demonstrations only (`task_search_config`); the sandbox copies' are kept
    # by `sandbox_site`.
    examples: bool = False
    # The policy's temperature, over the strategy's own (None).
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    # Every model call of every task's run stored with its whole prompt (`--keep-prompts`).
    keep_prompts: bool = False


class TaskResult(BaseModel):
    task_id: int
    intent: str
    sites: list[str]
    eval_types: list[EvalType]
    unachievable: bool
    strategy: str
    model: str
    scripted_model: bool
    approvals: str = Field(description="The approval policy: all (every question approved) or none")
    examples: bool = Field(default=False, description="Retrieved steps (the demonstrations) in every prompt")
    temperature: float | None = Field(default=None, description="The policy's temperature, where --temperature set "
                                                                "it over the strategy's own")
    status: ResultStatus
    answer: str
    final_url: str
    score: float
    parts: dict[str, float]
    reason: str = ""
    # Why the task could not be evaluated, if it could not (the score is then 0).
    eval_error: str = ""
    run_id: str
    steps: int
    backtracks: int
    approvals_asked: int
    usage: dict[str, Usage]
    wall_s: float
    # The models' mistakes per role and kind (core/mistakes.py).
    mistakes: MistakeCounts = {}
    # The seconds the run waited on each role's calls (`model_seconds`); empty for results older than schema 7.
    model_seconds: dict[str, float] = {}
    # The seconds it waited on any call (`model_wait_s`); 0 for results written before it was kept.
    model_wait_s: float = 0.0
    # The name a report gives the folder it read this result from (`eval report NAME=FOLDER`: two commits' runs of one
    # strategy side by side); never written to a results file.
    version: str = Field(default="", exclude=True)

    @property
    def key(self) -> ResultKey:
        """What one result is of: a later result with the same key replaces it, and a task with one is not run again."""
        return self.strategy, self.model, self.examples, self.temperature, self.version, self.task_id

    @property
    def evaluated(self) -> bool:
        """False when the task could not be set up or evaluated: not the agent's failure, left out of the rates."""
        return not self.eval_error


# (strategy, model, with examples, temperature, version, task id)
ResultKey = tuple[str, str, bool, float | None, str, int]


def _span(call: ModelCallRecord) -> tuple[float, float]:
    """When the run waited on a call: from its sending to its answer (created_at)."""
    end = call.created_at.timestamp()
    return end - call.seconds, end


def _union_seconds(spans: Sequence[tuple[float, float]]) -> float:
    """How long at least one of the spans was under way: calls made at once count once."""
    total, reached = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reached:
            total += end - max(start, reached)
            reached = end
    return total


def model_seconds(calls: Sequence[ModelCallRecord]) -> dict[str, float]:
    """The seconds the run waited on each role's calls, over a run's calls (a role's calls at once count once)."""
    roles = sorted({call.role for call in calls})
    return {role: round(_union_seconds([_span(c) for c in calls if c.role == role]), 3) for role in roles}


def model_wait_s(calls: Sequence[ModelCallRecord]) -> float:
    """The seconds the run waited on any model call: its wall time spent on the model."""
    return round(_union_seconds([_span(c) for c in calls]), 3)


def read_results(path: Path) -> list[TaskResult]:
    """The results in a results file, in order. A line that is not one (torn by a crash mid-write, even inside a
    character) is skipped with a warning: its task runs again."""
    results = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            results.append(TaskResult.model_validate_json(raw.decode("utf-8")))
        except ValueError:  # UnicodeDecodeError is one
            log.warning("%s line %d is not a result (cut short?); its task will run again", path, number)
    return results


SANDBOX_SITE = "sandbox:"


def sandbox_site(name: str) -> str:
    """What the eval's sandbox copies of a site keep demonstrations by: their ports change from task to task."""
    return SANDBOX_SITE + name


def import_demonstrations(source: Path, out: Path) -> int:
    """Copy the demonstrations of a store (`branchwise explore --site-name sandbox:SITE --data-dir ...`) into the
    eval's own store, so its runs retrieve them; ones copied before are not copied again. Returns how many were new."""
    with RunStore(default_store_path(source) if source.is_dir() else source) as origin:
        demos = origin.demonstrations()
    out.mkdir(parents=True, exist_ok=True)
    with RunStore(default_store_path(out)) as store:
        have = {(d.site, d.instruction, d.created_at) for d in store.demonstrations()}
        new = [d for d in reversed(demos) if (d.site, d.instruction, d.created_at) not in have]
        for demo in new:
            store.add_demonstration(demo.model_copy(update={"demo_id": None}))
    return len(new)


def done_tasks(path: Path, strategy: str, model: str, examples: bool = False,
               temperature: float | None = None) -> set[int]:
    """Tasks already in the results file for `strategy` with `model`, with or without `examples`, at `temperature`."""
    if not path.exists():
        return set()
    return {r.task_id for r in read_results(path) if r.key[:4] == (strategy, model, examples, temperature)}


def end_torn_line(path: Path) -> None:
    """A last line cut short by a crash is ended, so the next result starts on a line of its own."""
    if path.exists() and path.stat().st_size:
        with path.open("rb+") as file:
            file.seek(-1, 2)
            if file.read(1) != b"\n":
                file.write(b"\n")


def task_search_config(task: TaskConfig, options: EvalOptions) -> SearchConfig:
    """How a task's run searches. Retrieval draws on the demonstrations (`eval --demos`) only, never on the eval's own
    finished runs: those include the other strategies' runs of the same task, and a task's result must not depend on
    what ran before it."""
    return search_config(options.strategy, profile=options.profile, backtrack=options.backtrack,
                         max_steps=options.max_steps, limits=options.limits, examples=options.examples,
                         site=sandbox_site(task.sites[0]) if task.sites else None, past_runs=False,
                         temperature=options.temperature, keep_prompts=options.keep_prompts)


async def run_task(task: TaskConfig, model: ModelSetup, options: EvalOptions, out: Path) -> TaskResult:
    started = time.perf_counter()
    approver = PolicyApprover(options.approve, f"branchwise eval --approve {'all' if options.approve else 'none'}")
    with tempfile.TemporaryDirectory(prefix=f"branchwise-eval-{task.task_id}-") as tmp:
        work = Path(tmp)
        async with fresh_sites(task.sites, work) as running:
            sites = SiteUrls({site.placeholder: site.base_url for site in running})
            config = ServerConfig(port=0, data_dir=work / "backend")
            async with open_session(config, options.chromium) as session:
                try:
                    if task.require_login:
                        for site in running:
                            await log_in(session.browser, site.base_url, LOGINS[site.name])
                except LoginFailed as exc:
                    # Not the agent's failure: the task could not be set up. On record, scored 0, with the reason.
                    unrun = RunResult(run_id="", task=task.intent, status="failed", reason=f"setup: {exc}")
                    return _result(task, model, options, unrun, "", 0.0, {}, f"setup: {exc}", (), 0, {},
                                   time.perf_counter() - started)
                tab = await session.browser.open_tab(sites.resolve(task.start_url))
                env = BrowserEnv(session.browser, tab.tab_id)
                with RunStore(default_store_path(out)) as store:
                    # Tasks run at once share the clients; each run counts its own usage per role.
                    agent = SearchAgent(model.roles, session.browser, task_search_config(task, options),
                                        store=store, approver=approver, gate=session.gate)
                    result = await agent.run(task.intent, env, Reporters())
                    stored = store.load_run(result.run_id)
                    calls = store.model_calls(result.run_id)
                final_url = env.last.url if env.last is not None else ""
                tools = EvalTools(sites, judge=model.client, reader=BrowserPageReader(session.browser, final_url),
                                  databases={site.name: site.database for site in running})
                score, parts, problem = 0.0, {}, ""
                try:
                    verdict = await evaluate(task, RunOutcome(result.answer if result.status == "finished" else None,
                                                              final_url), tools)
                    score, parts = verdict.score, dict(verdict.parts)
                except EvaluationError as exc:
                    problem = str(exc)
                except LLMError as exc:  # the judge (fuzzy_match, ua_match): not the agent's failure
                    problem = f"the judge model could not be used: {exc}"
    return _result(task, model, options, result, final_url, score, parts, problem, stored.backtracks,
                   len(approver.asked), {u.role: Usage(**u.model_dump(include=set(Usage.model_fields)))
                                         for u in stored.usage}, time.perf_counter() - started, calls)


def _result(task: TaskConfig, model: ModelSetup, options: EvalOptions, result: RunResult, final_url: str,
            score: float, parts: dict[str, float], problem: str, backtracks: Sequence[object], asked: int,
            usage: dict[str, Usage], wall_s: float, calls: Sequence[ModelCallRecord] = ()) -> TaskResult:
    return TaskResult(
        task_id=task.task_id, intent=task.intent, sites=task.sites, eval_types=task.eval.eval_types,
        unachievable=task.eval.unachievable, strategy=options.strategy, model=model.client.config.model,
        scripted_model=model.scripted, approvals="all" if options.approve else "none", examples=options.examples,
        temperature=options.temperature,
        status=result.status,
        answer=result.answer, final_url=final_url, score=score, parts=parts, reason=result.reason,
        eval_error=problem, run_id=result.run_id, steps=len(result.steps), backtracks=len(backtracks),
        approvals_asked=asked, usage=usage, wall_s=round(wall_s, 2), mistakes=result.mistakes,
        model_seconds=model_seconds(calls), model_wait_s=model_wait_s(calls))


def progress_bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else width
    return f"[{'#' * filled}{'.' * (width - filled)}]"


def progress_line(results: Sequence[TaskResult], total: int, eta_s: float, task: TaskConfig) -> str:
    """One line after each task: how far, the success rate over the tasks evaluated so far (a task that could not be
    set up or judged is counted apart, as the report does), and the last task's result."""
    count, last = len(results), results[-1]
    evaluated = [r for r in results if r.evaluated]
    rate = f"{sum(r.score for r in evaluated) / len(evaluated):.0%}" if evaluated else "n/a"
    skipped = len(results) - len(evaluated)
    return (f"{progress_bar(count, total)} {count}/{total}, SR so far {rate}"
            + (f" ({skipped} not evaluated)" if skipped else "")
            + (f", about {eta_s / 60:.1f} min left" if count < total else "")
            + f" | task {task.task_id} ({', '.join(task.sites)}; {'+'.join(task.eval.eval_types)}): "
            f"score {last.score:g}, {last.status}, {last.wall_s:.1f} s"
            + (f" — {last.eval_error}" if last.eval_error else ""))


async def run_eval(tasks: Sequence[TaskConfig], model: ModelSetup, options: EvalOptions, out: Path,
                   say: Callable[[str], None], *, workers: int = 1) -> list[TaskResult]:
    """Runs the tasks not yet in `out/results.jsonl` for this strategy, `workers` at a time (each task in its own
    Chromium, backend and site copies), appending each result as soon as it is known; returns the new results."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESULTS_FILE
    done = done_tasks(path, options.strategy, model.client.config.model, options.examples, options.temperature)
    end_torn_line(path)
    todo = [t for t in tasks if t.task_id not in done]
    if done:
        say(f"Resuming: {len(tasks) - len(todo)} of {len(tasks)} task(s) already in {path}")
    results: list[TaskResult] = []
    started = time.perf_counter()
    slots = asyncio.Semaphore(max(1, workers))

    async def one(task: TaskConfig) -> None:
        async with slots:
            result = await run_task(task, model, options, out)
        # Appends happen on the event loop, one at a time: lines never interleave.
        with path.open("a", encoding="utf-8") as file:
            file.write(result.model_dump_json() + "\n")
        results.append(result)
        eta = (time.perf_counter() - started) / len(results) * (len(todo) - len(results))
        say(progress_line(results, len(todo), eta, task))

    await gather_all(one(task) for task in todo)
    return results
