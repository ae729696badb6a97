"""A page longer than the model's prompt: the answer lies screens below the top of a real shop listing, and the agent
finds it by scrolling. Real Chromium with the extension, the real backend through `branchwise run`, the sandbox shop
(SQLite), a scripted model over HTTP that answers only once the product is in the observation it was sent."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from lxml import html

from branchwise.sandbox import ShopConfig, ShopServer
from branchwise.scripted_model import Rule, Script, ScriptedModelServer

from test_cli_e2e import base_env, branchwise

pytestmark = pytest.mark.e2e

LISTING = "/search?q=e"
CONTEXT_TOKENS = "4096"  # leaves the page ~6,800 characters of prompt; the listing is several times that


def cot(action: str) -> str:
    return f"Let's think step-by-step. I look at the page. In summary, the next action I will perform is ```{action}```"


def last_product(base_url: str) -> tuple[str, str]:
    """The name and price of the last product the listing shows, read off the shop's own page."""
    page = html.fromstring(urllib.request.urlopen(base_url + LISTING).read())  # noqa: S310 - the test's own shop
    last = "(//li[@class='product-card'])[last()]"
    name, price = str(page.xpath(f"string({last}//h2/a)")), str(page.xpath(f"string({last}//p[@class='price'])"))
    assert name and price, "the listing's last card has no name or price"
    return name, price


def test_the_answer_several_screens_down_is_found_by_scrolling(tmp_path: Path) -> None:
    with ShopServer(ShopConfig(db_path=tmp_path / "shop.sqlite3", page_size=60)) as shop:
        name, price = last_product(shop.base_url)
        script = Script(rules=[
            Rule(name="answer", when_contains=[f"link '{name}'"], search_in="last_user", reply=cot(f"stop [{price}]")),
            Rule(name="scroll", reply=cot("scroll [down]")),
        ])
        with ScriptedModelServer(script) as model:
            env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                        "BRANCHWISE_MODEL": "scripted"}
            out = tmp_path / "result.json"
            proc = branchwise("run", f"What is the price of {name}?", "--start-url", shop.base_url + LISTING,
                              "--launch", "--headless", "--strategy", "greedy", "--context-tokens", CONTEXT_TOKENS,
                              "--data-dir", str(tmp_path / "data"), "--json", str(out), env=env, timeout=300)
            prompts = [r.last_user for r in model.requests()]
    assert out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "finished" and result["answer"] == price, proc.stdout + proc.stderr
    actions = [step["action"] for step in result["steps"]]
    assert actions[-1] == f"stop [{price}]" and set(actions[:-1]) == {"scroll [down]"} and len(actions) >= 3
    first = prompts[0]
    # The model first saw the top of the listing, told where it is and what lies below, not the product it asks about.
    assert f"link '{name}'" not in first
    assert "[Part of a long page: 0-" in first and "the viewport is screen 1 of" in first
    assert "Below this part of the page (scroll [down] to see it):" in first
    # Every scroll showed it something new, within what its context has room for.
    assert len(set(prompts)) == len(prompts)
    assert all(len(p.split("OBSERVATION:\n", 1)[1].rsplit("\nURL: ", 1)[0]) <= 6848 for p in prompts)
    assert "Above this part of the page (scroll [up] to see it):" in prompts[-1]
