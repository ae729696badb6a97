"""`branchwise eval --model simulated:0` on one dev task per site and type: the reference solutions, proposed by the
simulated model over HTTP, carried out by the extension in Chromium on fresh sandbox sites, satisfy WebArena's
evaluators and the database checks; the report's figures are the results file's. Error rate 0: plumbing, not planning
quality (the model knows the answers), and the report says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_cli_e2e import base_env, branchwise

pytestmark = pytest.mark.e2e

DEV = Path(__file__).parents[1] / "tasks" / "dev"
# (site, type) -> task: information, navigation and state change on the shop, the forum and the tracker, and one task
# that cannot be done (answered N/A).
TASKS = {
    ("shopping", "information"): 1001, ("shopping", "navigation"): 1002, ("shopping", "state change"): 1031,
    ("shopping", "unachievable"): 1003,
    ("reddit", "information"): 2001, ("reddit", "navigation"): 2019, ("reddit", "state change"): 2029,
    ("gitlab", "information"): 3001, ("gitlab", "navigation"): 3019, ("gitlab", "state change"): 3025,
}


def test_simulated_model_solves_one_dev_task_per_site_and_type_and_the_report_adds_up(tmp_path: Path) -> None:
    out = tmp_path / "out"
    picked = [arg for task in TASKS.values() for arg in ("--task-id", str(task))]
    done = branchwise("eval", str(DEV), *picked, "--model", "simulated:0", "--strategy", "greedy", "--approve", "all",
                      "--workers", "2", "--headless", "--out", str(out), env=base_env(tmp_path), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SIMULATED model simulated:0" in done.stdout and "10/10, SR so far 100%" in done.stdout

    results = {r["task_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert sorted(results) == sorted(TASKS.values())
    failed = {t: (r["score"], r["status"], r["reason"], r["eval_error"]) for t, r in results.items() if r["score"] != 1}
    assert not failed, failed
    assert all(r["model"] == "simulated:0" and r["scripted_model"] and r["approvals"] == "all"
               for r in results.values())
    # The state changes went through the approval policy: adding to the cart and the rest were asked and approved.
    assert results[TASKS["shopping", "state change"]]["approvals_asked"] >= 1
    assert results[TASKS["shopping", "unachievable"]]["answer"] == "N/A"

    made = branchwise("eval", "report", str(out), env=base_env(tmp_path))
    assert made.returncode == 0, made.stdout + made.stderr
    assert "SCRIPTED/SIMULATED model" in made.stdout
    [greedy] = json.loads((out / "report.json").read_text())["strategies"]
    assert (greedy["sr"]["successes"], greedy["sr"]["tasks"]) == (10.0, 10)
    assert (greedy["sr_ua"]["tasks"], greedy["sr_ac"]["tasks"]) == (1, 9)
    assert {site: rate["tasks"] for site, rate in greedy["by_site"].items()} == {"gitlab": 3, "reddit": 3,
                                                                                 "shopping": 4}
    assert {kind: rate["tasks"] for kind, rate in greedy["by_type"].items()} == {
        "information": 4, "navigation": 3, "state change": 3}
    steps = sum(r["steps"] for r in results.values()) / len(results)
    assert greedy["costs"]["steps"] == pytest.approx(steps)
    calls = sum(r["usage"]["policy"]["calls"] for r in results.values()) / len(results)
    assert greedy["costs"]["calls"]["policy"] == pytest.approx(calls)
    page = (out / "report.html").read_text()
    assert "Scripted or simulated model" in page and "Subscribe to the forum f/travel" in page
