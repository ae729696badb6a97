"""`branchwise eval` end to end on the dev tasks of the shop: each task on a freshly seeded shop, in its own Chromium
with the extension and its own backend, answered by a scripted model over HTTP, scored by WebArena's evaluators and
appended to results.jsonl; running the same command again resumes instead of repeating the tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchwise.bench.scenarios import PRICE
from branchwise.sandbox.landmarks import HERB_PLANTER
from branchwise.scripted_model import Rule, Script, ScriptedModelServer

from test_cli_e2e import base_env, branchwise

pytestmark = pytest.mark.e2e

DEV = Path(__file__).parents[1] / "tasks" / "dev" / "shopping.json"


def act(action: str) -> str:
    return f"Let's think step-by-step. I read the page. In summary, the next action I will perform is ```{action}```"


def script() -> Script:
    """Answers the three dev tasks: the planter's price (from its page), the Garden category (a URL), and a product
    the shop does not sell (N/A)."""
    planter = "OBJECTIVE: What is the price of the Rootstock"
    garden = "OBJECTIVE: Show me the products of the Garden category"
    return Script(rules=[
        Rule(when_contains=["OBJECTIVE: What is the price of the Acme Pocket Teleporter?"], search_in="last_user",
             reply=act("stop [N/A]")),
        Rule(when_contains=[planter], search_in="last_user", when_regex=r"URL: \S*/product/\d+",
             reply=act(f"stop [{{{{match: {PRICE}}}}}]")),
        Rule(when_contains=[planter, f"link '{HERB_PLANTER}'"], search_in="last_user",
             reply=act(f"click [{{{{id: link '{HERB_PLANTER}'}}}}]")),
        Rule(when_contains=[planter], search_in="last_user",
             reply=act("type [{{id: searchbox 'Search products'}}] [Rootstock herb planter] [1]")),
        Rule(when_contains=[garden], search_in="last_user", when_regex=r"URL: \S*/category/garden",
             reply=act("stop [Here are the Garden products]")),
        Rule(when_contains=[garden], search_in="last_user", reply=act("click [{{id: link 'Garden'}}]")),
    ])


def test_eval_runs_scores_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with ScriptedModelServer(script()) as model:
        env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                    "BRANCHWISE_MODEL": "scripted"}
        command = ["eval", str(DEV), "--strategy", "greedy", "--out", str(out), "--headless",
                   "--task-id", "1001", "--task-id", "1002", "--task-id", "1003"]
        # Two tasks at once, each in its own Chromium, backend and shop.
        first = branchwise(*command, "--workers", "2", env=env, timeout=400)
        assert first.returncode == 0, first.stdout + first.stderr
        asked = len(model.requests())
        again = branchwise(*command, env=env, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(model.requests()) == asked, "resuming re-ran a finished task"

    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_id = {r["task_id"]: r for r in results}
    assert sorted(by_id) == [1001, 1002, 1003] and len(results) == 3
    assert (by_id[1001]["answer"], by_id[1001]["score"]) == ("$34.50", 1.0)
    assert by_id[1002]["final_url"].endswith("/category/garden") and by_id[1002]["parts"] == {"url_match": 1.0}
    assert (by_id[1003]["answer"], by_id[1003]["score"], by_id[1003]["unachievable"]) == ("N/A", 1.0, True)
    assert all(r["strategy"] == "greedy" and r["approvals"] == "none" and r["model"] == "scripted" for r in results)
    assert all(r["usage"]["policy"]["calls"] == r["steps"] for r in results)
    # Every call was timed and kept with its run: the seconds the model worked on the policy's calls.
    assert all(set(r["model_seconds"]) == {"policy"} and r["model_seconds"]["policy"] > 0 for r in results)
    assert "3/3, SR so far 100%" in first.stdout
    assert "Nothing to run: all 3 task(s) have a result under greedy with scripted in" in again.stdout
    # The report's figures are the results file's: SR 3/3 for greedy, costs the mean of the results.
    made = branchwise("eval", "report", str(out), env=base_env(tmp_path))
    assert made.returncode == 0, made.stdout + made.stderr
    # The model was the scripted one: the report says its figures prove plumbing only.
    assert "greedy: SR 100.0%" in made.stdout and "SCRIPTED/SIMULATED model" in made.stdout
    report = json.loads((out / "report.json").read_text())
    [greedy] = report["strategies"]
    assert (greedy["sr"]["successes"], greedy["sr"]["tasks"]) == (3.0, 3)
    assert (greedy["sr_ua"]["tasks"], greedy["sr_ac"]["tasks"]) == (1, 2)
    mean_calls = sum(r["usage"]["policy"]["calls"] for r in results) / 3
    assert greedy["costs"]["calls"]["policy"] == pytest.approx(mean_calls)
    assert greedy["costs"]["timed"] == 3 and greedy["costs"]["model_seconds"]["policy"] > 0
    page = (out / "report.html").read_text()
    assert page.count("<svg") == 2 and "What is the price of the Acme Pocket Teleporter?" in page
    assert "Scripted or simulated model" in page
    # The runs are recorded where the results are: `branchwise show` reads them.
    shown = branchwise("show", by_id[1001]["run_id"], "--data-dir", str(out), env=base_env(tmp_path))
    assert shown.returncode == 0 and "Rootstock" in shown.stdout
