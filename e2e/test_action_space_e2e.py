"""The dynamic action space on real pages: what the extension reports about history, scrolling and how a page loaded,
and how action_aware search refuses impossible moves before they cost a step in the user's tab."""

from __future__ import annotations

import io
import re
import socket
from pathlib import Path

import pytest
from pydantic import SecretStr

from branchwise.agent.env import BrowserEnv
from branchwise.agent.records import RunResult
from branchwise.agent.reporting import TerminalReporter
from branchwise.bench.scenarios import PRICE
from branchwise.llm import LLMClient, LLMConfig
from branchwise.protocol import GoBackCmd, GotoCmd
from branchwise.sandbox import ShopServer
from branchwise.scripted_model import Script, ScriptedModelServer
from branchwise.scripted_model.script import Rule
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.roles import ModelRoles
from branchwise.store import RunStore

from harness import Stack

pytestmark = pytest.mark.e2e

TASK = "What is the price of the first product listed in the Garden category?"


def _act(action: str) -> str:
    return f"Let's think step-by-step. I try a move. In summary, the next action I will perform is ```{action}```"


def wandering_script(origin: str) -> Script:
    """On the home page every generator first proposes moves the page cannot take (as a model that ignores the
    prompt's NOT POSSIBLE HERE line would): go back in a fresh tab, scroll up at the top, an address that answers
    404; each refusal's reason leads to the next try, the last one works."""
    objective = f"OBJECTIVE: {TASK}"
    judge = "The proposal is judged.\nChecklist 1: In Progress"
    rules = [
        Rule(name="checklist", when_contains=["Starting URL:"], reply="Checklist 1: Open Garden - read the price"),
        Rule(name="rephrase", when_contains=["Task: " + TASK], search_in="last_user",
             reply="# REPHRASED TASK:\nRead the first Garden price.\n# SUBGOALS:\n- open Garden"),
        Rule(name="judge", when_contains=["Proposed step:"], reply=judge),
        Rule(name="after 404: the real address", when_contains=["answers HTTP 404"], search_in="last_user",
             reply=_act(f"goto [{origin}/category/garden]")),
        Rule(name="at the top: a wrong address", when_contains=["cannot be done: the page is already at the top"],
             search_in="last_user",
             reply=_act(f"goto [{origin}/no-such-page]")),
        Rule(name="no history: scroll up", when_contains=["cannot be done: there is no previous page"],
             search_in="last_user",
             reply=_act("scroll [up]")),
        Rule(name="garden: answer", when_contains=[objective], search_in="last_user",
             when_regex=r"URL: \S*/category/garden", reply=_act(f"stop [{{{{match: {PRICE}}}}}]")),
        Rule(name="home: go back", when_contains=[objective], search_in="last_user", reply=_act("go_back")),
    ]
    return Script(rules=rules)


def closed_port() -> int:
    """A local port nothing listens on (and not one Chromium refuses outright, like 9)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_extension_reports_history_scroll_and_load_status(stack: Stack, shop: ShopServer) -> None:
    browser = stack.session.browser

    async def state(tab_id: int) -> tuple[bool | None, bool | None, int | None, bool, bool]:
        view = await BrowserEnv(browser, tab_id).observe()
        nav, scroll = view.navigation, view.scroll
        return (nav.can_go_back, nav.can_go_forward, nav.http_status, nav.error_page,
                scroll.page_height > scroll.viewport_height > 0)

    async def scenario() -> list[tuple[bool | None, bool | None, int | None, bool, bool]]:
        tab = await browser.open_tab(shop.base_url + "/")
        unreachable = await browser.open_tab(f"http://127.0.0.1:{closed_port()}/", active=False)
        try:
            seen = [await state(tab.tab_id)]
            await browser.act(tab.tab_id, GotoCmd(url=shop.base_url + "/no-such-page"))
            seen.append(await state(tab.tab_id))
            await browser.act(tab.tab_id, GoBackCmd())
            seen.append(await state(tab.tab_id))
            seen.append(await state(unreachable.tab_id))
        finally:
            await browser.close_tab(unreachable.tab_id)
            await browser.close_tab(tab.tab_id)
        return seen

    home, missing, back_home, unreachable = stack.call(scenario())
    # A fresh tab has nowhere to go back to; the home page is longer than the window.
    assert home == (False, False, 200, False, True)
    assert missing[:4] == (True, False, 404, False)
    assert back_home[:4] == (False, True, 200, False)
    assert unreachable[3] is True


def run_search(stack: Stack, shop: ShopServer, model: ScriptedModelServer, store_path: Path,
               out: io.StringIO) -> tuple[RunResult, list[str]]:
    """One action_aware run from the shop's home page; returns its result and the tab URLs left afterwards."""
    browser = stack.session.browser

    async def scenario() -> tuple[RunResult, list[str]]:
        tab = await browser.open_tab(shop.base_url + "/")
        env = BrowserEnv(browser, tab.tab_id)
        async with LLMClient(LLMConfig(base_url=model.base_url, api_key=SecretStr("test"), model="scripted")) as client:
            with RunStore(store_path) as store:
                agent = SearchAgent(ModelRoles.shared(client), browser, SearchConfig(strategy="action_aware"),
                                    store=store)
                result = await agent.run(TASK, env, TerminalReporter(out))
        urls = [t.url for t in await browser.list_tabs()]
        await browser.close_tab(env.tab_id)
        return result, urls

    return stack.call(scenario(), timeout=180)


def test_impossible_moves_are_refused_with_reasons_before_anything_runs(
        stack: Stack, shop: ShopServer, tmp_path: Path) -> None:
    out = io.StringIO()
    with ScriptedModelServer(wandering_script(shop.base_url)) as model:
        result, urls = run_search(stack, shop, model, tmp_path / "runs.sqlite3", out)
        feedback = [r.messages[-1].content for r in model.requests() if r.messages[-1].role == "user"]
        judged = [r.messages[-1].content for r in model.requests() if "Proposed step:" in r.messages[-1].content]

    assert result.status == "finished", out.getvalue()
    # Each refusal reached the model with its reason, in the order the page's state explains.
    missing = f"{shop.base_url}/no-such-page"
    for reason in ("`go_back` cannot be done: there is no previous page in this tab",
                   "`scroll [up]` cannot be done: the page is already at the top",
                   f"`goto [{missing}]` cannot be done: {missing} answers HTTP 404"):
        assert any(text.startswith(reason) for text in feedback), (reason, feedback[-6:])
    # The first prompt had said what the home page does not allow (WebOperator's dynamic action space).
    told = [text for text in feedback if "NOT POSSIBLE HERE: " in text]
    assert told and "go_back (there is no previous page)" in told[0]
    assert "scroll [up] (the page is at its top)" in told[0]
    # None of them ran in the user's tab: the one step taken is the address that works, then the answer.
    steps = [s.action for s in result.steps]
    assert steps == [f"goto [{shop.base_url}/category/garden]", f"stop [{result.answer}]"]
    # The address check's throw-away tab is gone.
    assert not any("no-such-page" in u for u in urls)
    # The reward model judged the answer knowing how it had judged the step that led to the Garden page.
    assert re.search(r"Milestones as judged at the previous step:\n\(none judged yet\)", judged[0])
    assert re.search(r"Milestones as judged at the previous step:\n1\. .+: In Progress\n", judged[-1])


def test_a_later_run_sees_the_steps_of_an_earlier_finished_run(stack: Stack, shop: ShopServer, tmp_path: Path) -> None:
    store_path = tmp_path / "runs.sqlite3"
    with ScriptedModelServer(wandering_script(shop.base_url)) as model:
        first, _ = run_search(stack, shop, model, store_path, io.StringIO())
        assert first.status == "finished"
        model.reset()
        out = io.StringIO()
        second, _ = run_search(stack, shop, model, store_path, out)
        prompts = [r.messages[-1].content for r in model.requests() if "OBJECTIVE:" in r.messages[-1].content]

    assert second.status == "finished", out.getvalue()
    assert "retrieval: 2 past steps from 1 finished run(s)" in out.getvalue()
    # Only the retrieval variation's prompts carry the examples: on the home page, the first run's working address.
    with_examples = [p for p in prompts if "Steps that worked on similar tasks" in p]
    assert with_examples and len(with_examples) < len(prompts)
    assert any(f"Action: goto [{shop.base_url}/category/garden]" in p and f"Task: {TASK}" in p for p in with_examples)
