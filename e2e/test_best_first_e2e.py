"""best_first answers information questions on the sandbox shop: real Chromium with the extension, the real backend,
a scripted model over HTTP. Answers are checked against the shop's database, the final page against the browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchwise.bench.scenarios import PLANTER_TASK, planter_script
from branchwise.sandbox import ShopServer
from branchwise.sandbox.landmarks import HERB_PLANTER
from branchwise.sandbox.queries import ShopQueries
from branchwise.scripted_model import ScriptedModelServer
from branchwise.store import RunStore, default_store_path

from harness import Stack
from test_cli_e2e import base_env, branchwise
from test_search_e2e import search_in_tab

pytestmark = pytest.mark.e2e


def planter_price(shop: ShopServer) -> str:
    return f"${ShopQueries(shop.config.db_path).product_by_name(HERB_PLANTER).price_cents / 100:.2f}"


def test_best_first_answers_a_question_whose_page_the_value_function_calls_a_success(
        tmp_path: Path, shop: ShopServer) -> None:
    """The value function judges the product page a success before anything is answered; the answer then comes from
    the policy on that page (it used to end with "no state better than where it started")."""
    with ScriptedModelServer(planter_script()) as model:
        env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                    "BRANCHWISE_MODEL": "scripted"}
        out, data_dir = tmp_path / "result.json", tmp_path / "data"
        proc = branchwise("run", PLANTER_TASK, "--start-url", shop.base_url + "/", "--launch", "--headless",
                          "--strategy", "best_first", "--data-dir", str(data_dir), "--json", str(out),
                          env=env, timeout=300)
    assert out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (result["status"], result["answer"]) == ("finished", planter_price(shop))
    assert [step["action"].split(" ")[0] for step in result["steps"]] == ["type", "click", "stop"]
    with RunStore(default_store_path(data_dir)) as store:
        stored = store.load_run(str(result["run_id"]))
    by_id = {n.node_id: n for n in stored.nodes}
    final = by_id[stored.trajectory[-1]]
    assert final.status == "terminal" and final.answer == planter_price(shop)
    assert final.parent_id is not None
    product = by_id[final.parent_id]
    assert "/product/" in product.url and product.value == 1.0
    # Every state was scored once: the product page was not scored again in a second round.
    assert len([v for v in stored.values if v.kind == "value"]) == 3


def test_the_final_tab_shows_the_page_the_answer_was_read_from(stack: Stack, shop: ShopServer,
                                                               tmp_path: Path) -> None:
    """The answer proposed on the product page wins after search went on to the category: the browser goes back."""
    with ScriptedModelServer(planter_script(detour=True)) as model:
        run = search_in_tab(stack, shop.base_url + "/", model, PLANTER_TASK, "best_first", tmp_path / "runs.sqlite3")
    result, stored, url, text = run.result, run.stored, run.url, run.text
    assert result.answer == planter_price(shop)
    by_id = {n.node_id: n for n in stored.nodes}
    # Search ran the more often sampled move first: the category page, a dead end.
    assert any("/category/garden" in n.url for n in stored.nodes)
    # Then the answer won, and the browser went back to the product page it was read on.
    final = by_id[stored.trajectory[-1]]
    assert final.parent_id is not None
    product = by_id[final.parent_id]
    assert "/product/" in product.url and url == product.url
    assert HERB_PLANTER in text and planter_price(shop) in text
    assert [(b.mode, b.outcome, b.target) for b in stored.backtracks] == [("speculative", "committed", product.node_id)]
    assert [by_id[i].action_text.split(" ")[0] for i in stored.trajectory[1:]] == ["type", "click", "stop"]
