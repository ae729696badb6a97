"""The search planner on the sandbox shop: real Chromium with the extension, the real backend, a scripted model over
HTTP. Answers are checked against the shop's database; backtracks against the run store and the browser itself."""

from __future__ import annotations

import io
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from branchwise.agent.env import BrowserEnv
from branchwise.agent.records import RunResult
from branchwise.agent.reporting import TerminalReporter
from branchwise.bench.scenarios import (
    DEAL_TASK,
    GARDEN_TASK,
    PRICE,
    best_first_script,
    deals_script,
    garden_script,
)
from branchwise.llm import LLMClient, LLMConfig
from branchwise.sandbox import DEALS_PATH, ShopConfig, ShopServer
from branchwise.scripted_model import Script, ScriptedModelServer
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.roles import ModelRoles
from branchwise.store import RunStore, StoredRun, default_store_path

from harness import Stack
from test_cli_e2e import base_env, branchwise, cheapest_garden_price

pytestmark = pytest.mark.e2e


@dataclass
class CliRun:
    proc: subprocess.CompletedProcess[str]
    result: dict[str, Any]
    stored: StoredRun | None
    data_dir: Path
    expected: str


def run_cli(tmp_path: Path, strategy: str, *extra: str, script: Script | None = None) -> CliRun:
    """`branchwise run --launch` on a fresh shop, answering from the garden script."""
    with ShopServer(ShopConfig(db_path=tmp_path / "shop.sqlite3")) as shop, \
            ScriptedModelServer(script or garden_script()) as model:
        env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                    "BRANCHWISE_MODEL": "scripted"}
        out, data_dir = tmp_path / "result.json", tmp_path / "data"
        proc = branchwise("run", GARDEN_TASK, "--start-url", shop.base_url + "/", "--launch", "--headless",
                          "--strategy", strategy, "--data-dir", str(data_dir), "--json", str(out), *extra,
                          env=env, timeout=300)
        assert out.exists(), proc.stdout + proc.stderr
        result = json.loads(out.read_text())
        stored = None
        if strategy != "greedy":
            with RunStore(default_store_path(data_dir)) as store:
                stored = store.load_run(str(result["run_id"]))
        return CliRun(proc, result, stored, data_dir, cheapest_garden_price(shop.config.db_path))


@pytest.fixture(scope="module")
def action_aware(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    return run_cli(tmp_path_factory.mktemp("action_aware"), "action_aware")


def test_dead_end_then_committed_speculative_backtrack_reaches_the_answer(action_aware: CliRun) -> None:
    run, stored = action_aware, action_aware.stored
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert run.result["status"] == "finished" and run.result["answer"] == run.expected
    assert f"Answer: {run.expected}" in run.proc.stdout
    assert stored is not None

    # The first branch really ran: the agent paged on to page 2, which led nowhere.
    by_id = {n.node_id: n for n in stored.nodes}
    dead_end = [n for n in stored.nodes if "page=2" in n.url]
    assert dead_end and dead_end[0].action_text.startswith("click [")
    executed = [step["url"] for step in run.result["steps"]]
    assert any("page=2" in url for url in executed)

    # Then search went back speculatively: one committed backtrack that replayed the chosen sort order.
    assert [(b.mode, b.outcome) for b in stored.backtracks] == [("speculative", "committed")]
    backtrack = stored.backtracks[0]
    assert backtrack.replayed_actions == 1 and backtrack.source == dead_end[0].node_id
    assert by_id[backtrack.target].action_text.startswith("select_option")
    # It replayed from the Garden page, found by reloading it in a throw-away tab: a checkpoint.
    garden = next(n for n in stored.nodes if n.url.endswith("/category/garden"))
    assert garden.checkpoint is True
    assert "backtrack #" in run.proc.stdout and "committed" in run.proc.stdout

    # The chosen trajectory skips the dead end: home, Garden, choose the order, press Sort, answer.
    path = [by_id[i] for i in stored.trajectory]
    assert [n.action_text.split(" ")[0] for n in path[1:]] == ["click", "select_option", "click", "stop"]
    assert all("page=2" not in n.url for n in path)
    assert "sort=price-asc" in path[-1].url


def test_show_prints_the_tree_and_the_trajectory(action_aware: CliRun) -> None:
    env = base_env(action_aware.data_dir.parent)
    runs = branchwise("runs", "--data-dir", str(action_aware.data_dir), env=env)
    run_id = str(action_aware.result["run_id"])
    assert runs.returncode == 0 and run_id in runs.stdout and "action_aware" in runs.stdout
    shown = branchwise("show", run_id[:6], "--data-dir", str(action_aware.data_dir), env=env)
    assert shown.returncode == 0, shown.stderr
    assert GARDEN_TASK in shown.stdout and "Chosen trajectory" in shown.stdout
    assert re.search(r"speculative\s+committed", shown.stdout)
    missing = branchwise("show", "nosuchrun", "--data-dir", str(action_aware.data_dir), env=env)
    assert missing.returncode == 2 and "nosuchrun" in missing.stderr


def test_greedy_fails_where_action_aware_succeeds(tmp_path: Path, action_aware: CliRun) -> None:
    greedy = run_cli(tmp_path, "greedy")
    # Same model, same task: greedy follows the first idea to page 2 and answers from an unsorted page.
    assert greedy.result["status"] == "finished"
    assert greedy.result["answer"] != greedy.expected
    assert any("page=2" in step["url"] for step in greedy.result["steps"])
    assert action_aware.result["answer"] == action_aware.expected

    # The greedy run is in the run store too: listed, and shown as a linear tree with its steps and usage.
    env, run_id = base_env(tmp_path), str(greedy.result["run_id"])
    runs = branchwise("runs", "--data-dir", str(greedy.data_dir), env=env)
    assert runs.returncode == 0 and re.search(rf"{run_id}\s.*\sgreedy\s+finished\s", runs.stdout), runs.stdout
    shown = branchwise("show", run_id, "--data-dir", str(greedy.data_dir), env=env)
    assert shown.returncode == 0, shown.stderr
    assert "Strategy:  greedy" in shown.stdout and f"Answer:    {greedy.result['answer']}" in shown.stdout
    assert "page=2" in shown.stdout and "\n  policy " in shown.stdout
    assert all(step["action"] in shown.stdout for step in greedy.result["steps"])


def test_best_first_scores_states_backtracks_and_answers(tmp_path: Path) -> None:
    run = run_cli(tmp_path, "best_first", script=best_first_script())
    assert run.proc.returncode == 0, run.proc.stdout + run.proc.stderr
    assert run.result["answer"] == run.expected
    stored = run.stored
    assert stored is not None
    # States were scored by the value function (the laptop profile's 5 self-consistency samples each) before search
    # chose among them.
    values = [v for v in stored.values if v.kind == "value"]
    assert values and all(len(v.samples) == 5 for v in values)
    page2 = next(n for n in stored.nodes if "page=2" in n.url)
    assert page2.value == 0.0
    # Paging on was sampled more often, so it ran first; then search went back to press Sort instead.
    assert [(b.mode, b.outcome) for b in stored.backtracks] == [("speculative", "committed")]
    by_id = {n.node_id: n for n in stored.nodes}
    final = by_id[stored.trajectory[-1]]
    assert final.status == "terminal" and final.value == 1.0 and final.answer == run.expected
    usage = {u.role: u for u in stored.usage}
    assert usage["value"].calls >= len(values) and usage["policy"].calls >= 1


@pytest.fixture
def deals_model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(deals_script()) as server:
        yield server


@dataclass
class InTab:
    """A search run in a tab of the shared browser, and what that tab showed afterwards."""

    result: RunResult
    stored: StoredRun
    url: str
    text: str
    # The tab the run ended in (a committed replay swaps tabs) and the tab it started in.
    working_tab: int
    first_tab: int
    tabs: list[str]
    shown: str


def search_in_tab(stack: Stack, start_url: str, model: ScriptedModelServer, task: str, strategy: str,
                  store_path: Path) -> InTab:
    browser = stack.session.browser
    out = io.StringIO()

    async def scenario() -> tuple[RunResult, str, str, int, int, list[str]]:
        tab = await browser.open_tab(start_url)
        env = BrowserEnv(browser, tab.tab_id)
        config = LLMConfig(base_url=model.base_url, api_key=SecretStr("test"), model="scripted")
        async with LLMClient(config) as client:
            with RunStore(store_path) as store:
                agent = SearchAgent(ModelRoles.shared(client), browser, SearchConfig(strategy=strategy), store=store)
                result = await agent.run(task, env, TerminalReporter(out))
        after = await env.observe()
        urls = [t.url for t in await browser.list_tabs()]
        await browser.close_tab(env.tab_id)
        return result, after.url, after.text, env.tab_id, tab.tab_id, urls

    result, url, text, working_tab, first_tab, urls = stack.call(scenario(), timeout=240)
    assert result.status == "finished", out.getvalue()
    with RunStore(store_path) as store:
        stored = store.load_run(result.run_id)
    return InTab(result, stored, url, text, working_tab, first_tab, urls, out.getvalue())


def test_page_changing_on_reload_aborts_the_backtrack_and_leaves_the_working_tab_untouched(
        stack: Stack, shop: ShopServer, deals_model: ScriptedModelServer, tmp_path: Path) -> None:
    run = search_in_tab(stack, shop.base_url + DEALS_PATH, deals_model, DEAL_TASK, "action_aware",
                        tmp_path / "runs.sqlite3")
    result, stored, url, text, urls = run.result, run.stored, run.url, run.text, run.tabs

    # The featured deal changed when the deals page was opened again in a throw-away tab, so the start page is no
    # checkpoint and no replay can rebuild it: the backtrack was refused before anything was replayed.
    assert [(b.mode, b.outcome) for b in stored.backtracks] == [("speculative", "aborted")]
    assert "no state on the way to #0 survives a reload" in stored.backtracks[0].reason
    assert {n.node_id: n.checkpoint for n in stored.nodes}[0] is False
    # The working tab was never touched: same tab, same URL, and exactly the page the search last saw there.
    garden = next(n for n in stored.nodes if "/category/garden" in n.url)
    assert run.working_tab == run.first_tab
    assert url == garden.url and text == garden.observation_text
    assert not any(DEALS_PATH in u for u in urls), "the throw-away tab was closed"
    # The run went on from where it was and answered from the Garden page.
    assert re.fullmatch(PRICE, result.answer) and result.answer in garden.observation_text
