"""The run lifecycle: any registered strategy run as an agent (the CLI's and the side panel's entry point), with the
run store, the network gate, usage per model role, and an end with a reason whatever happens."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..actions import Action
from ..agent.env import BrowserEnv
from ..agent.records import RunResult
from ..agent.reporting import RunReporter
from ..browser import Browser
from ..core.approval import Approver, DenyApprover
from ..core.budget import BudgetExhausted, Limits, RunBudget
from ..core.classes import ActionClassifier
from ..core.mistakes import describe_mistakes
from ..core.status import TERMINATED, BacktrackMode, ResultStatus, Role
from ..core.tasks import BESIDE_FAILED
from ..core.usage import Usage
from ..link import ExtensionError, LinkTimeout
from ..llm import LLMError
from ..policy.prompts import observation_chars
from ..protocol import new_id
from ..safety import SafetyClassifier
from ..safety.gate import GateRun, NetworkGate, gate_run
from ..safety.secrets import SecretKeeper, mask_task, task_secrets
from ..safety.sites import SiteRefused
from ..store import RecordLost, RunRecord, RunStore
from ..store import UsageRecord as StoredUsage
from .backtrack import (
    Backtracker,
    BacktrackResult,
    CheckpointProbe,
    NaiveBacktracker,
    SpeculativeBacktracker,
)
from .context import LostTrack, SearchContext, SearchOutcome, SearchStrategy
from .examples import site_of
from .resume import ResumePoint, resume_into
from .roles import ModelRoles
from .state import SearchState
from .step import answer_found
from .strategies import strategy_spec
from .trace import SearchTrace
from .tree import SearchTree
from .urlcheck import UrlProbe
from .waiting import ModelWait

log = logging.getLogger(__name__)


class SearchConfig(BaseModel):
    """How a run plans: the strategy (a name in `strategies.STRATEGIES`), its own settings and the backtracking mode."""

    model_config = ConfigDict(frozen=True)
    strategy: str = "action_aware"
    backtrack: BacktrackMode = "speculative"
    # The profile `options` and `limits` came from (`profiles.PROFILES`), recorded with the run; "": none named.
    profile: str = ""
    # The strategy's settings (its module's config class); None: its defaults.
    options: BaseModel | None = None
    # Overrides the strategy's step limit (`--max-steps`); None: the strategy's own default.
    max_steps: int | None = Field(default=None, ge=1)
    # Overrides the temperature its policy samples actions at (`--temperature`); None: the strategy's own.
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    # What one run may spend on its model (--max-model-calls, --max-tokens, --timeout).
    limits: Limits = Limits()
    # Retrieved steps (finished runs, the site's demonstrations) in every strategy's prompt (--examples).
    examples: bool = False
    # Every model call stored with its whole prompt (--keep-prompts), for reading why a model answered as it did.
    keep_prompts: bool = False
    # What the site's demonstrations are kept by; None: the start page's host (`examples.site_of`).
    site: str | None = None
    # Whether retrieval draws on the store's finished runs as well as on the site's demonstrations. Eval turns it off:
    # its store holds the other strategies' runs of the same tasks (their answers would leak into the prompt and the
    # results would depend on the order tasks ran in); WebOperator retrieves from a database collected in advance.
    past_runs: bool = True

    @field_validator("strategy")
    @classmethod
    def _known(cls, name: str) -> str:
        strategy_spec(name)
        return name


def make_strategy(config: SearchConfig) -> SearchStrategy:
    return strategy_spec(config.strategy).make(config.options, max_steps=config.max_steps,
                                               temperature=config.temperature)


class SearchAgent:
    """Runs any registered strategy with one lifecycle: the run store, the network gate, usage per model role, and an
    end with a reason whatever happens. `browser` is what backtracking and the `goto` check open throw-away tabs in;
    without one (a strategy that never goes back, on a test environment) neither is available."""

    def __init__(self, roles: ModelRoles, browser: Browser | None, config: SearchConfig | None = None, *,
                 store: RunStore | None = None,
                 approver: Approver | None = None, classifier: ActionClassifier | None = None,
                 gate: NetworkGate | None = None, strategy: SearchStrategy | None = None) -> None:
        self.roles = roles
        self.browser = browser
        self.config = config or SearchConfig()
        self.store = store
        self.approver = approver or DenyApprover()
        # Holds the mutating requests no approval covers while the run works (None: not watched).
        self.gate = gate
        self.classifier = classifier or SafetyClassifier()
        # A strategy outside the registry (an exploration episode); None: the one `config` names.
        self.strategy = strategy

    def _backtracker(self, env: BrowserEnv) -> Backtracker:
        if self.browser is None:
            return NoBacktracker()
        probe = CheckpointProbe(self.browser, env)
        if self.config.backtrack == "naive":
            return NaiveBacktracker(self.browser, probe)
        return SpeculativeBacktracker(self.browser, probe)

    async def run(self, task: str, env: BrowserEnv, reporter: RunReporter, *, run_id: str | None = None,
                  resume: ResumePoint | None = None) -> RunResult:
        """Run `task` in env's tab; with `resume`, go on with the interrupted run it names (same id, its recorded path
        as history, its usage so far counted) in the tab it was working in (`env`), once the caller has reopened it in
        the store (RunStore.reopen_run: it fails while another process owns the run)."""
        run_id = resume.stored.run.run_id if resume is not None else run_id or new_id()
        strategy = self.strategy or make_strategy(self.config)
        budget = RunBudget(self.config.limits)
        before = usage_before(resume)
        # A resumed run's limits count what it used before the interruption (its wall time starts again).
        budget.used = sum(before.values(), Usage())
        state = SearchState()
        # Card numbers and passwords in the task are masked wherever it is shown or stored; the model gets the task as
        # written.
        shown_task = mask_task(task)
        secrets = SecretKeeper(task_secrets(task))
        trace = SearchTrace(run_id, strategy.name, reporter, self.store, state, secrets,
                            keep_prompts=self.config.keep_prompts)
        wait = ModelWait(trace.progress)
        roles = self.roles.for_run(budget, before, on_call=trace.model_called, wait=wait)
        # A page longer than the model's prompt has room for is shown around its viewport.
        env.text_chars = observation_chars(roles.policy.config)
        result = RunResult(run_id=run_id, task=shown_task, status="failed", model=self.roles.policy.config.model)
        await reporter.started(run_id, shown_task)
        if resume is not None:
            await reporter.progress(run_id, f"resuming run {run_id} in tab {env.tab_id}")
        await reporter.progress(run_id, f"strategy {strategy.name}" + (
            f", backtracking {self.config.backtrack}" if strategy.backtracks else "") + (
            f", profile {self.config.profile}" if self.config.profile else "") + (
            f", temperature {self.config.temperature:g}" if self.config.temperature is not None else "") + (
            ", retrieved steps" if self.config.examples else "") + (
            f", limits: {self.config.limits.describe()}"))
        url_check = UrlProbe(self.browser, env.config.sites) if self.browser is not None else None
        ctx = SearchContext(run_id, task, env, roles, self._backtracker(env), self.classifier, self.approver,
                            trace, reporter, result.steps, state, url_check=url_check, store=self.store,
                            secrets=secrets, budget=budget,
                            use_examples=self.config.examples, past_runs=self.config.past_runs,
                            site=self.config.site or (site_of(resume.stored.run.start_url) if resume else ""))

        async def search() -> SearchOutcome:
            if resume is not None:
                await resume_into(ctx, resume)
            return await strategy.search(ctx)

        cancelled: ResultStatus | None = None
        try:
            if resume is None:  # a resumed run was reopened by the caller (RunStore.reopen_run)
                await trace.writer.start(RunRecord(
                    run_id=run_id, task=shown_task, strategy=strategy.name,
                    backtrack_mode=self.config.backtrack if strategy.backtracks else "",
                    profile=self.config.profile, temperature=self.config.temperature, examples=self.config.examples,
                    max_steps=self.config.max_steps, limits=self.config.limits,
                    model=self.roles.policy.config.model, start_url=(env.last.url if env.last else ""),
                    tab_id=env.tab_id))
            async with gate_run(self.gate, env, GateRun(run_id, trace.writer, self.approver, say=trace.progress)):
                outcome = await within_time(search(), self.config.limits.timeout_s)
        except asyncio.CancelledError as exc:
            # A run whose process was told to stop is interrupted, as after a crash: on record to resume while its tab
            # is open. Otherwise the user's stop (Ctrl-C, the side panel's Stop), unless a run beside it failed;
            # libraries' own cancel messages (anyio's cancel scopes) say nothing to the user.
            if TERMINATED in exc.args:
                cancelled, reason = "interrupted", TERMINATED
            else:
                cancelled, reason = "stopped", BESIDE_FAILED if BESIDE_FAILED in exc.args else "stopped by the user"
            outcome = SearchOutcome("failed", reason=reason)
            raise
        except LLMError as exc:
            outcome = SearchOutcome("failed", reason=f"the model could not be used: {exc}")
        except BudgetExhausted as exc:
            outcome = await answer_found(ctx, f"{exc} (used {budget.describe()})")
        except (LostTrack, RecordLost) as exc:
            outcome = SearchOutcome("failed", reason=str(exc))
        except ExtensionError as exc:
            outcome = SearchOutcome("failed", reason=_browser_failure(exc))
        except SiteRefused as exc:
            log.warning("run %s stopped at the site lists: %s", run_id, exc)
            outcome = SearchOutcome("failed", reason=f"stopped: {exc}")
        except Exception as exc:  # the run ends with a reason instead of a traceback in the user's terminal
            log.exception("run %s failed", run_id)
            outcome = SearchOutcome("failed", reason=f"{type(exc).__name__}: {exc}")
        finally:
            wait.close()
            result.status = cancelled or outcome.status
            result.answer, result.reason = outcome.answer, outcome.reason
            # A resumed run's roles count from what it had used before it was interrupted; a role this strategy does
            # not use is left out.
            used = roles.usage()
            result.usage = sum(used.values(), Usage())
            result.mistakes = roles.mistakes()
            # A thought written before the run learnt a secret in it (a password noted, then typed) is shown scrubbed.
            result.steps[:] = [s.model_copy(update={"thought": secrets.scrub(s.thought)}) for s in result.steps]
            # On record first: what is shown after cannot keep the run's end from the store (a terminal gone, a panel
            # that fails).
            await trace.writer.finish(
                result.status, result.answer, result.reason,
                usage=[StoredUsage(run_id=run_id, role=role, **delta.model_dump()) for role, delta in used.items()],
                calls=await trace.unwritten_calls(), scrub=secrets.scrub)
            for role, delta in used.items():
                cached = f" ({delta.cached_prompt_tokens} cached)" if delta.cached_prompt_tokens else ""
                await reporter.progress(run_id, f"{role} model: {delta.calls} calls, {delta.prompt_tokens} prompt"
                                                f"{cached} + {delta.completion_tokens} completion tokens")
            for role, counts in result.mistakes.items():
                await reporter.progress(run_id, f"{role} model mistakes: {describe_mistakes(counts)}")
            await trace.publish()
            await asyncio.shield(reporter.finished(result))
        return result


def usage_before(resume: ResumePoint | None) -> dict[Role, Usage]:
    """What a resumed run had used per model role before it was interrupted."""
    if resume is None:
        return {}
    return {u.role: Usage(**u.model_dump(include=set(Usage.model_fields))) for u in resume.stored.usage}


def _browser_failure(exc: ExtensionError) -> str:
    """Why a run stopped when the extension could not go on, in the user's terms."""
    if exc.code == "tab_closed":
        return "stopped: the working tab was closed; nothing more was done"
    if isinstance(exc, LinkTimeout):
        return f"stopped: the extension went away and did not come back ({exc.message})"
    log.warning("the extension refused a command: %s", exc)
    return f"stopped: the extension could not go on ({exc})"


async def within_time(search: Coroutine[Any, Any, SearchOutcome], timeout_s: float | None) -> SearchOutcome:
    """The search, stopped when the run's time limit is up, even in the middle of an action or a model call (the model
    calls check the limit too, so most runs stop between steps)."""
    try:
        async with asyncio.timeout(timeout_s) as deadline:
            return await search
    except TimeoutError:
        if not deadline.expired():
            raise
        raise BudgetExhausted(f"the run's time limit ({Limits(timeout_s=timeout_s).describe()}) is reached") from None


class NoBacktracker:
    """Without a browser to open throw-away tabs in, nothing can be replayed: every backtrack is refused."""

    mode: BacktrackMode = "speculative"

    async def move(self, env: BrowserEnv, tree: SearchTree, target_id: int, pending: Action | None) -> BacktrackResult:
        return BacktrackResult(False, self.mode, "no browser to replay in")
