"""A model that names a product's heading, not the link in it, as a real 1.5B model does: greedy, in real Chromium on
the sandbox shop, opens the product through that link, and the run shows the link as what it clicked."""

from __future__ import annotations

import io
import re

import pytest
from pydantic import SecretStr

from branchwise.agent.env import BrowserEnv
from branchwise.agent.records import RunResult
from branchwise.agent.reporting import TerminalReporter
from branchwise.llm import LLMClient, LLMConfig
from branchwise.sandbox import ShopServer
from branchwise.scripted_model import Script, ScriptedModelServer
from branchwise.scripted_model.script import Rule
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.roles import ModelRoles

from harness import Stack

pytestmark = pytest.mark.e2e

TASK = "What is the price of the first product shown on the home page?"
# A product card's heading and the one line inside it, the link to the product, then the card's price: the heading's id,
# the name, the link's id, the price. The script names the first group, as a model reading the page would name the
# heading.
CARD = r"\[(\d+)\] heading '([^']+)'\n\s*\[(\d+)\] link '\2'\n\s*\[\d+\] StaticText '(\$[\d,]+\.\d\d)'"


def _act(action: str) -> str:
    return f"Let's think step-by-step. The product's name opens it. In summary, the next action I will perform is " \
           f"```{action}```"


def test_a_click_on_a_products_heading_opens_it_through_the_one_link_inside(stack: Stack, shop: ShopServer) -> None:
    script = Script(rules=[
        Rule(name="product page: answer", when_regex=r"URL: \S*/product/\d+", search_in="last_user",
             reply=_act(r"stop [{{match: \$\d+\.\d\d}}]")),
        Rule(name="home: the heading", search_in="last_user", reply=_act(f"click [{{{{match: {CARD}}}}}]")),
    ])
    browser, out = stack.session.browser, io.StringIO()

    async def scenario() -> RunResult:
        tab = await browser.open_tab(shop.base_url + "/")
        env = BrowserEnv(browser, tab.tab_id)
        try:
            async with LLMClient(LLMConfig(base_url=model.base_url, api_key=SecretStr("t"), model="scripted")) as llm:
                agent = SearchAgent(ModelRoles.shared(llm), browser, SearchConfig(strategy="greedy"))
                return await agent.run(TASK, env, TerminalReporter(out))
        finally:
            await browser.close_tab(tab.tab_id)

    with ScriptedModelServer(script) as model:
        result = stack.call(scenario(), timeout=120)
        [at_home] = [r for r in model.requests() if r.rule == "home: the heading"]

    assert result.status == "finished", out.getvalue()
    card = re.search(CARD, at_home.last_user)
    assert card, "the shop's home page shows a product card's heading around its link"
    heading, link, price = card.group(1), card.group(3), card.group(4)
    # The model named the heading; the link inside it is what ran, what the run shows and what was counted.
    assert at_home.replies[0].endswith(f"```click [{heading}]```")
    assert [s.action for s in result.steps] == [f"click [{link}]", f"stop [{result.answer}]"]
    assert "/product/" in result.steps[1].url and result.answer == price
    assert result.mistakes == {"policy": {"retargeted": 1}}
