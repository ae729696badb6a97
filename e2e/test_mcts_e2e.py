"""WebPilot (`--strategy mcts`) through the CLI on the sandbox shop: real Chromium with the extension, the real
backend, a scripted model over HTTP. The first plan fails, the Controller's reflection reaches the Planner, and the
refined plan answers; the answer is checked against the shop's database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchwise.bench.scenarios import BROWSE_BOOKS, PLANTER_TASK, SEARCH_BY_NAME, mcts_replan_script
from branchwise.sandbox import ShopServer
from branchwise.scripted_model import ScriptedModelServer
from branchwise.store import RunStore, default_store_path

from test_best_first_e2e import planter_price
from test_cli_e2e import base_env, branchwise

pytestmark = pytest.mark.e2e


def test_a_failed_plan_is_refined_with_the_controllers_reflection_and_the_new_plan_answers(
        tmp_path: Path, shop: ShopServer) -> None:
    with ScriptedModelServer(mcts_replan_script()) as model:
        env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                    "BRANCHWISE_MODEL": "scripted"}
        out, data_dir = tmp_path / "result.json", tmp_path / "data"
        proc = branchwise("run", PLANTER_TASK, "--start-url", shop.base_url + "/", "--launch", "--headless",
                          "--strategy", "mcts", "--data-dir", str(data_dir), "--json", str(out),
                          env=env, timeout=300)
        asked = model.requests()
    assert out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (result["status"], result["answer"]) == ("finished", planter_price(shop))
    printed = proc.stdout + proc.stderr
    # Browsing Books was tried twice (the second time with the Controller's reflection), then the plan was refined.
    assert printed.count(f"subtask: {BROWSE_BOOKS}") == 2
    assert f"refined plan: 1. {SEARCH_BY_NAME}" in printed
    planner = [r for r in asked if r.rule and r.rule.startswith("planner")]
    assert [r.rule for r in planner] == ["planner: first plan", "planner: refined plan"]
    refined = planner[1].prompt_text
    assert f"Subtask that failed: {BROWSE_BOOKS}" in refined and "search the shop by the product's name" in refined
    with RunStore(default_store_path(data_dir)) as store:
        stored = store.load_run(str(result["run_id"]))
    by_id = {n.node_id: n for n in stored.nodes}
    final = by_id[stored.trajectory[-1]]
    assert final.status == "terminal" and final.answer == planter_price(shop)
    assert final.parent_id is not None and "/product/" in by_id[final.parent_id].url
    # Going back to the subtask's start was a speculative replay, and every node was appraised.
    assert stored.backtracks and all(b.mode == "speculative" for b in stored.backtracks)
    assert {v.method for v in stored.values} == {"appraiser"}
    usage = {u.role: u.calls for u in stored.usage}
    assert usage["planner"] >= 2 + 4 and usage["policy"] >= 4 and usage["value"] >= 3
