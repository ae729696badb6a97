"""Resuming an evaluation: the results file decides which tasks are done, per strategy and model; a line cut short by
a crash is not a result, so its task runs again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from branchwise.core.status import Role
from branchwise.core.usage import Usage
from branchwise.harness.run import (
    EvalOptions,
    TaskResult,
    done_tasks,
    end_torn_line,
    import_demonstrations,
    model_seconds,
    model_wait_s,
    progress_bar,
    progress_line,
    read_results,
    sandbox_site,
    task_search_config,
)
from branchwise.harness.tasks import load_tasks
from branchwise.store import DemonstrationRecord, DemoStep, ModelCallRecord, RunStore, default_store_path


def result(task_id: int, strategy: str, model: str = "m") -> TaskResult:
    return TaskResult(task_id=task_id, intent="t", sites=["shopping"], eval_types=["string_match"],
                      unachievable=False, strategy=strategy, model=model, scripted_model=False, approvals="none",
                      status="finished", answer="a", final_url="http://x/", score=1.0, parts={"string_match": 1.0},
                      run_id="r", steps=1, backtracks=0, approvals_asked=0, usage={"policy": Usage(calls=1)},
                      wall_s=1.0)


def test_done_tasks_are_per_strategy_and_model_and_a_torn_line_is_run_again(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    assert done_tasks(path, "greedy", "m") == set()
    lines = [result(1, "greedy"), result(2, "best_first"), result(3, "greedy"), result(5, "greedy", "simulated:0.3")]
    torn = result(4, "greedy").model_dump_json()[:40]
    path.write_text("".join(r.model_dump_json() + "\n" for r in lines) + torn)
    assert done_tasks(path, "greedy", "m") == {1, 3}
    assert done_tasks(path, "best_first", "m") == {2}
    assert done_tasks(path, "greedy", "simulated:0.3") == {5}
    # With retrieved examples, a column of its own: not done because the plain run is; so is another temperature.
    assert done_tasks(path, "greedy", "m", examples=True) == set()
    assert done_tasks(path, "greedy", "m", temperature=0.0) == set()
    with path.open("a") as file:
        file.write("\n" + result(1, "greedy").model_copy(update={"temperature": 0.0}).model_dump_json() + "\n")
    assert done_tasks(path, "greedy", "m", temperature=0.0) == {1}
    assert done_tasks(path, "greedy", "m") == {1, 3}


def test_a_line_torn_inside_a_character_is_run_again(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    whole = result(1, "greedy").model_copy(update={"answer": "Café"})
    torn = result(2, "greedy").model_copy(update={"answer": "Café"}).model_dump_json().encode()
    path.write_bytes(whole.model_dump_json().encode() + b"\n" + torn[:torn.index("é".encode()) + 1])
    assert done_tasks(path, "greedy", "m") == {1}
    assert [r.answer for r in read_results(path)] == ["Café"]


def test_the_time_waited_on_the_model_counts_calls_under_way_at_once_once() -> None:
    t0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)

    def call(role: Role, start: float, seconds: float) -> ModelCallRecord:
        return ModelCallRecord(run_id="r", role=role, seconds=seconds,
                               created_at=t0 + timedelta(seconds=start + seconds))

    # Three generators sent at once and answered one after another, then the reward model; a gap; a last call.
    calls = [call("policy", 0, 10), call("policy", 0, 20), call("policy", 0, 30), call("reward", 30, 5),
             call("policy", 40, 2)]
    assert model_seconds(calls) == {"policy": 32.0, "reward": 5.0}
    assert model_wait_s(calls) == 37.0
    assert model_seconds([]) == {} and model_wait_s([]) == 0.0


def test_a_result_after_a_torn_line_is_on_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    end_torn_line(path)
    assert not path.exists()
    path.write_text(result(1, "greedy").model_dump_json() + "\n" + result(2, "greedy").model_dump_json()[:30])
    end_torn_line(path)
    end_torn_line(path)
    with path.open("a") as file:
        file.write(result(3, "greedy").model_dump_json() + "\n")
    assert done_tasks(path, "greedy", "m") == {1, 3}


def test_the_progress_bar_fills_with_the_tasks_done() -> None:
    assert progress_bar(0, 4, width=8) == "[........]"
    assert progress_bar(1, 4, width=8) == "[##......]"
    assert progress_bar(4, 4, width=8) == "[########]"


def test_the_progress_lines_success_rate_leaves_out_tasks_that_could_not_be_judged() -> None:
    task = load_tasks([Path(__file__).parents[1] / "tasks" / "test"])[0]
    solved = result(1, "greedy")
    broken = result(2, "greedy").model_copy(update={"score": 0.0, "eval_error": "the site could not be set up"})
    line = progress_line([solved, broken], 4, 120.0, task)
    assert "2/4, SR so far 100% (1 not evaluated), about 2.0 min left" in line
    assert line.endswith("score 0, finished, 1.0 s — the site could not be set up")
    assert "SR so far n/a (1 not evaluated)" in progress_line([broken], 1, 0.0, task)
    failed = result(3, "greedy").model_copy(update={"score": 0.0})
    assert "2/2, SR so far 50% |" in progress_line([solved, failed], 2, 0.0, task)


def test_explored_demonstrations_are_copied_into_the_eval_store_once(tmp_path: Path) -> None:
    explored = tmp_path / "explored"
    explored.mkdir()
    with RunStore(default_store_path(explored)) as store:
        for instruction in ("Open the Garden category", "Search for a planter"):
            store.add_demonstration(DemonstrationRecord(
                site=sandbox_site("shopping"), instruction=instruction, score=5,
                steps=[DemoStep(url="http://127.0.0.1:1/", action_text="click [1]")]))
    out = tmp_path / "results"
    assert import_demonstrations(explored, out) == 2
    assert import_demonstrations(default_store_path(explored), out) == 0  # a store file works too; nothing twice
    with RunStore(default_store_path(out)) as store:
        assert [d.instruction for d in store.demonstrations("sandbox:shopping")] == [
            "Search for a planter", "Open the Garden category"]


def test_a_tasks_retrieval_draws_on_the_sites_demonstrations_and_never_on_the_evals_own_runs() -> None:
    """The eval's store holds the other strategies' runs of the same task: their answers must not reach the prompt."""
    [task] = [t for t in load_tasks([Path(__file__).parents[1] / "tasks" / "test"]) if t.task_id == 3002]
    for examples in (True, False):
        config = task_search_config(task, EvalOptions(strategy="action_aware", examples=examples, max_steps=10))
        assert (config.past_runs, config.examples, config.site) == (False, examples, sandbox_site("gitlab"))
        assert (config.strategy, config.max_steps, config.temperature) == ("action_aware", 10, None)
    assert task_search_config(task, EvalOptions(temperature=0.0)).temperature == 0.0, "eval --temperature reaches it"
    assert task_search_config(task, EvalOptions(keep_prompts=True)).keep_prompts, "and eval --keep-prompts"
    assert not task_search_config(task, EvalOptions()).keep_prompts
