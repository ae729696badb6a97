"""Faults benchmark: what a run does when something around it fails, and whether a destructive action is ever repeated.

    python -m branchwise.bench.faults [--only NAME ...] [--json PATH]

Each fault runs the same task through the real stack (backend, Chromium with the extension, the sandbox shop with its
SQLite database, the scripted model over HTTP), with greedy and the network gate, every held request approved: "Add
the book to my shopping cart", whose one destructive step is the shop's "Add to cart" POST. The fault strikes before or
after that step. The table gives the run's end (status and reason) and how many times the book went into the cart,
read from the shop's database: a repeated destructive action shows as more than one. Asserts nothing; the e2e test
`e2e/test_faults_e2e.py` checks a subset.

The last three rows run in child processes with a Chromium of their own (bench/crash.py): the backend is SIGKILLed
while the add runs or while the model thinks, or SIGTERMed while the add runs (it stops, leaving the run to resume),
and `branchwise resume` goes on with the run.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import logging
import signal
import sqlite3
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from ..agent.env import BrowserEnv
from ..agent.reporting import TerminalReporter
from ..config import ServerConfig
from ..core.approval import PolicyApprover
from ..launcher import ChromiumConfig
from ..llm import LLMClient, LLMConfig
from ..sandbox import ShopConfig, ShopQueries, ShopServer
from ..scripted_model import Script, ScriptedModelServer
from ..scripted_model import ServerConfig as ModelServerConfig
from ..scripted_model.script import Reply, Rule
from ..search.agent import SearchAgent, SearchConfig
from ..search.roles import ModelRoles
from ..session import Session, open_session
from .crash import HeldShop, Strike, add_in_flight, killed_and_resumed, thinking
from .report import run_and_report
from .scenarios import ADDED, CART_PRODUCT, CART_TASK, cot_answer

log = logging.getLogger(__name__)

GARBAGE = "I am not sure what to do here."
# How long the model takes to answer on the cart page, in the faults that strike while it thinks.
THINKING_S = 2.0


_REPORT = Reply(text=cot_answer("The cart confirms it.", f"stop [{{{{match: {ADDED}}}}}]"))


def cart_script(*, on_cart: Sequence[Reply] = (), everywhere: str | None = None, thinking_s: float = 0.0) -> Script:
    """The product page: add the book to the cart (after `thinking_s`); the cart page: report the shop's confirmation
    (after `on_cart`, in turn)."""
    objective = f"OBJECTIVE: {CART_TASK}"
    if everywhere is not None:
        return Script(rules=[Rule(name="everywhere", reply=everywhere)])
    return Script(rules=[
        Rule(name="cart", when_contains=[objective], search_in="last_user", when_regex=r"URL: \S*/cart",
             replies=[*on_cart, _REPORT]),
        Rule(name="product", when_contains=[objective, "button 'Add to cart'"], search_in="last_user",
             reply=Reply(text=cot_answer("This is the book's page.", "click [{{id: button 'Add to cart'}}]"),
                         delay_s=thinking_s)),
    ])


@dataclass
class Fault:
    name: str
    what: str
    script: Script
    model: ModelServerConfig = field(default_factory=ModelServerConfig)
    llm_timeout_s: float = 30.0
    # Run beside the agent: strikes at some point of the run (the stack, the shop and the model are at hand).
    strike: Callable[[FaultContext], Coroutine[Any, Any, None]] | None = None
    # The shop holds back its answer to the add (after adding the book), so a strike then lands while the add runs.
    held_add: bool = False


@dataclass
class FaultContext:
    session: Session
    shop: ShopServer
    model: ScriptedModelServer
    tab_id: int


async def _when_model_asked(ctx: FaultContext, times: int) -> None:
    while len(ctx.model.requests()) < times:
        await asyncio.sleep(0.05)


async def _close_tab_while_it_thinks(ctx: FaultContext) -> None:
    await _when_model_asked(ctx, 2)
    await ctx.session.browser.close_tab(ctx.tab_id)


async def _site_down_while_it_thinks(ctx: FaultContext) -> None:
    await _when_model_asked(ctx, 1)
    ctx.shop.stop()


async def _worker_stopped_while_it_thinks(ctx: FaultContext) -> None:
    await _when_model_asked(ctx, 2)
    await _stop_worker(ctx)


async def _worker_stopped_while_it_adds(ctx: FaultContext) -> None:
    db_path = ctx.shop.config.db_path
    product = ShopQueries(db_path).product_by_name(CART_PRODUCT)
    while added_to_cart(db_path, product.id) == 0:
        await asyncio.sleep(0.05)
    await _stop_worker(ctx)


async def _stop_worker(ctx: FaultContext) -> None:
    chromium = ctx.session.chromium
    assert chromium is not None
    targets = (await chromium.cdp("Target.getTargets"))["targetInfos"]
    for target in targets:
        if target["type"] == "service_worker" and ctx.session.config.extension_id in target["url"]:
            await chromium.cdp("Target.closeTarget", {"targetId": target["targetId"]})


# On the cart page, a look further down that the model takes its time over: the fault strikes while it thinks, and the
# scroll needs the tab and the extension.
SLOW_SCROLL = Reply(text=cot_answer("Let me see the rest of the cart.", "scroll [down]"), delay_s=THINKING_S)


FAULTS: tuple[Fault, ...] = (
    Fault("none", "no fault (the baseline)", cart_script()),
    Fault("model 429", "the model answers 429 twice, then normally", cart_script(),
          ModelServerConfig(fail_statuses=[429, 429])),
    Fault("model 500", "the model answers 500 until the retries run out", cart_script(),
          ModelServerConfig(fail_statuses=[500] * 4)),
    Fault("model garbage", "the model never names an action", cart_script(everywhere=GARBAGE)),
    Fault("garbage after", "the model stops naming actions after the add",
          cart_script(on_cart=[Reply(text=GARBAGE)] * 3)),
    Fault("model silent", "the model sends nothing after the add (1 s timeout), retried or not",
          cart_script(on_cart=[Reply(text=GARBAGE, delay_s=5.0)] * 4), llm_timeout_s=1.0),
    Fault("model slow once", "the model sends nothing once after the add, then answers",
          cart_script(on_cart=[Reply(text=GARBAGE, delay_s=5.0)]), llm_timeout_s=1.0),
    Fault("tab closed", "the user closes the working tab after the add", cart_script(on_cart=[SLOW_SCROLL]),
          strike=_close_tab_while_it_thinks),
    Fault("site down", "the shop goes down before the add", Script(rules=[
        Rule(name="product", when_contains=[f"OBJECTIVE: {CART_TASK}", "button 'Add to cart'"],
             search_in="last_user", reply=Reply(text=cot_answer("This is the book's page.",
                                                          "click [{{id: button 'Add to cart'}}]"), delay_s=THINKING_S)),
        Rule(name="anything else", reply=GARBAGE)]), strike=_site_down_while_it_thinks),
    Fault("worker stopped", "the extension's worker is stopped after the add", cart_script(on_cart=[SLOW_SCROLL]),
          strike=_worker_stopped_while_it_thinks),
    Fault("worker stopped mid-add", "the extension's worker is stopped while the add runs", cart_script(),
          strike=_worker_stopped_while_it_adds, held_add=True),
)


def added_to_cart(db_path: Path, product_id: int) -> int:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT COALESCE(SUM(quantity), 0) FROM cart_lines WHERE product_id = ?",
                           (product_id,)).fetchone()
    return int(row[0])


@dataclass(frozen=True)
class Killed:
    """A row run in child processes (bench/crash.py): the backend sent `signum`, then `branchwise resume`."""

    name: str
    what: str
    script: Script
    strike: Strike
    signum: int = signal.SIGKILL


KILLED: tuple[Killed, ...] = (
    Killed("backend killed mid-add", "the backend is SIGKILLed while the add runs, then `branchwise resume`",
           cart_script(), add_in_flight(added_to_cart)),
    Killed("backend killed thinking", "the backend is SIGKILLed while the model thinks on the book's page, then "
           "`branchwise resume`", cart_script(thinking_s=THINKING_S), thinking),
    Killed("backend terminated mid-add", "the backend is SIGTERMed while the add runs, then `branchwise resume`",
           cart_script(), add_in_flight(added_to_cart), signal.SIGTERM),
)


class FaultOutcome(BaseModel):
    fault: str
    what: str
    status: str
    reason: str
    answer: str
    # How many times the book went into the cart (the shop's database): 1 is the task done once.
    added: int
    repeated: int
    # The rows run in child processes: the first backend's exit status, the run's model calls on record then, and the
    # status of the result it wrote (--json) as it ended (None: none written).
    first_exit: int | None = None
    calls_kept: int | None = None
    first_result: str | None = None


class FaultsReport(BaseModel):
    outcomes: list[FaultOutcome]


async def run_fault(session: Session, fault: Fault, work: Path) -> FaultOutcome:
    db_path = work / "shop.sqlite3"
    shop_server = HeldShop if fault.held_add else ShopServer
    with shop_server(ShopConfig(db_path=db_path)) as shop, ScriptedModelServer(fault.script, fault.model) as model:
        product = ShopQueries(db_path).product_by_name(CART_PRODUCT)
        tab = await session.browser.open_tab(f"{shop.base_url}/product/{product.id}")
        env = BrowserEnv(session.browser, tab.tab_id)
        config = LLMConfig(base_url=model.base_url, api_key=SecretStr("bench"), model="scripted",
                           timeout_s=fault.llm_timeout_s, backoff_initial_s=0.05)
        striking: asyncio.Task[None] | None = None
        async with LLMClient(config) as client:
            agent = SearchAgent(ModelRoles.shared(client), session.browser, SearchConfig(strategy="greedy"),
                                approver=PolicyApprover(True, "the faults benchmark approves everything"),
                                gate=session.gate)
            if fault.strike is not None:
                striking = asyncio.create_task(fault.strike(FaultContext(session, shop, model, tab.tab_id)))
            result = await agent.run(CART_TASK, env, TerminalReporter(io.StringIO()))
            if striking is not None:
                striking.cancel()
        for leftover in await session.browser.list_tabs():
            await session.browser.close_tab_quietly(leftover.tab_id)
        added = added_to_cart(db_path, product.id)
    return FaultOutcome(fault=fault.name, what=fault.what, status=result.status, reason=result.reason,
                        answer=result.answer, added=added, repeated=max(0, added - 1))


async def run_killed(killed: Killed, work: Path) -> FaultOutcome:
    script = work / "script.json"
    killed.script.save(script)
    crashed = await killed_and_resumed(work, script, killed.strike, killed.signum)
    added = added_to_cart(crashed.db_path, crashed.product_id)
    run = crashed.run
    return FaultOutcome(fault=killed.name, what=killed.what, status=run.status, reason=run.reason, answer=run.answer,
                        added=added, repeated=max(0, added - 1), first_exit=crashed.first_exit,
                        calls_kept=crashed.calls_kept, first_result=crashed.first_result)


async def bench(only: Sequence[str] = ()) -> FaultsReport:
    chosen = [f for f in FAULTS if not only or f.name in only]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="branchwise-bench-faults-") as tmp:
        if chosen:
            async with open_session(ServerConfig(port=0, data_dir=Path(tmp) / "data"),
                                    ChromiumConfig(headless=True)) as session:
                for i, fault in enumerate(chosen):
                    work = Path(tmp) / str(i)
                    work.mkdir()
                    outcomes.append(await run_fault(session, fault, work))
                    log.info("%s: %s", fault.name, outcomes[-1].status)
        for i, killed in enumerate(k for k in KILLED if not only or k.name in only):
            work = Path(tmp) / f"killed-{i}"
            work.mkdir()
            outcomes.append(await run_killed(killed, work))
            log.info("%s: %s", killed.name, outcomes[-1].status)
    return FaultsReport(outcomes=outcomes)


def render(report: FaultsReport) -> str:
    lines = ["| fault | what | run ended | reason | added to cart | repeated |", "|---|---|---|---|--:|--:|"]
    for o in report.outcomes:
        reason = " ".join((o.reason or (f"answered: {o.answer}" if o.answer else "")).split())
        reason = reason if len(reason) <= 90 else reason[:89] + "…"
        lines.append(f"| {o.fault} | {o.what} | {o.status} | {reason} | {o.added} | {o.repeated} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m branchwise.bench.faults", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", default=[], metavar="NAME", help="run only these faults")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    return run_and_report(bench(args.only), render, verbose=args.verbose, json_path=args.json)


if __name__ == "__main__":
    raise SystemExit(main())
