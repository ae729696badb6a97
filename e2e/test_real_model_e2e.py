"""The real path, driven by a real model: `branchwise eval --local-model smollm2-135m` serves SmolLM2-135M-Instruct with
llama.cpp's server (xllamacpp, installed by `make setup`) and runs two dev tasks on fresh sandbox sites in Chromium.
The model is far too small to plan: this asserts that its calls, tokens and results are recorded, never that it
succeeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from branchwise.local_model import SMOLLM2_135M
from branchwise.store import RunStore, default_store_path

from test_cli_e2e import base_env, branchwise

pytestmark = pytest.mark.e2e

DEV = Path(__file__).parents[1] / "tasks" / "dev"
TASKS = (1001, 2001)  # an information question on the shop, one on the forum


def test_eval_with_a_real_local_model_records_calls_tokens_and_results(tmp_path: Path) -> None:
    assert not SMOLLM2_135M.missing(), f"the smoke test's model is not installed: {SMOLLM2_135M.install_hint}"
    out = tmp_path / "out"
    picked = [arg for task in TASKS for arg in ("--task-id", str(task))]
    # A small context keeps each call to a few seconds on a CPU (and has long pages shown around the viewport).
    done = branchwise("eval", str(DEV), *picked, "--local-model", SMOLLM2_135M.key, "--context-tokens", "2048",
                      "--strategy", "greedy", "--max-steps", "2", "--headless", "--out", str(out), "--keep-prompts",
                      env=base_env(tmp_path), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Model: local {SMOLLM2_135M.name} at http://127.0.0.1:" in done.stdout
    assert "(2048 tokens of context, 1 request(s) at once)" in done.stdout

    results = {r["task_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert sorted(results) == sorted(TASKS)
    for result in results.values():
        assert result["model"] == SMOLLM2_135M.key and not result["scripted_model"]
        assert result["status"] in ("finished", "failed") and (result["status"] == "finished" or result["reason"])
        policy = result["usage"]["policy"]
        assert policy["calls"] >= 1 and policy["prompt_tokens"] > 0 and policy["completion_tokens"] > 0
        # Real token counts: every prompt was cut to fit the 2,048-token context, instructions and answer included.
        assert policy["prompt_tokens"] / policy["calls"] <= 2048
        assert result["model_seconds"]["policy"] > 0  # every call timed and kept with the run
        assert 0.0 <= result["score"] <= 1.0
    # llama.cpp says how much of each prompt it had cached: at least the second task's first prompt shares the
    # system message and worked examples with the calls before it (one server answers both tasks).
    assert sum(r["usage"]["policy"]["cached_prompt_tokens"] for r in results.values()) > 0

    # --keep-prompts: each call's prompt, as the model got it, is in the store and shown with the run's calls.
    with RunStore.open(default_store_path(out)) as store:
        calls = [call for result in results.values() for call in store.model_calls(result["run_id"])]
    assert len(calls) == sum(r["usage"]["policy"]["calls"] for r in results.values())
    assert all(c.prompt.startswith("[system]\n") and "\n\n[user]\n" in c.prompt and "URL: " in c.prompt for c in calls)
    shown = branchwise("show", results[TASKS[0]]["run_id"], "--calls", "--data-dir", str(out), env=base_env(tmp_path))
    assert shown.returncode == 0 and "\n  prompt:\n    [system]\n" in shown.stdout, shown.stdout + shown.stderr

    made = branchwise("eval", "report", str(out), env=base_env(tmp_path))
    assert made.returncode == 0, made.stdout + made.stderr
    assert "SCRIPTED/SIMULATED model" not in made.stdout
    [greedy] = json.loads((out / "report.json").read_text())["strategies"]
    assert greedy["sr"]["tasks"] == 2 and greedy["costs"]["calls"]["policy"] >= 1
