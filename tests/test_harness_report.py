"""The evaluation report: SR, SR_AC and SR_UA with Wilson intervals, costs per task and role, by site and task type,
strategies side by side and merged from several folders; the HTML shows the figures and flags scripted models."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from branchwise.cli import main
from branchwise.core.usage import Usage
from branchwise.harness.paired import sign_test
from branchwise.harness.report import (
    Source,
    build_report,
    load_results,
    render_html,
    render_markdown,
    report_source,
    wilson,
    write_report,
)
from branchwise.harness.run import TaskResult
from branchwise.store import ModelCallRecord, RunRecord, RunStore, default_store_path


def result(task_id: int, strategy: str, score: float, *, unachievable: bool = False, sites: tuple[str, ...] = ("shop",),
           eval_types: tuple[str, ...] = ("string_match",), model: str = "qwen", calls: int = 2,
           value_calls: int = 0) -> TaskResult:
    usage = {"policy": Usage(calls=calls, prompt_tokens=1000 * calls, completion_tokens=50 * calls)}
    if value_calls:
        usage["value"] = Usage(calls=value_calls, prompt_tokens=800 * value_calls, completion_tokens=20 * value_calls)
    return TaskResult.model_validate(dict(
        task_id=task_id, intent=f"task {task_id}", sites=list(sites), eval_types=list(eval_types),
        unachievable=unachievable, strategy=strategy, model=model, scripted_model=False, approvals="none",
        status="finished", answer="", final_url="", score=score, parts={}, run_id="r", steps=3, backtracks=1,
        approvals_asked=0, usage=usage, wall_s=10.0))


def test_wilson_intervals() -> None:
    assert wilson(5, 10).value == 0.5
    assert (round(wilson(5, 10).low, 3), round(wilson(5, 10).high, 3)) == (0.237, 0.763)
    none = wilson(0, 10)
    assert none.low == 0.0 and round(none.high, 3) == 0.278
    assert wilson(0, 0).tasks == 0


def test_rates_split_achievable_and_unachievable_by_site_and_type() -> None:
    results = [
        result(1, "greedy", 1.0), result(2, "greedy", 0.0, sites=("forum",), eval_types=("url_match",)),
        result(3, "greedy", 1.0, unachievable=True), result(4, "greedy", 0.0, eval_types=("program_html",)),
        result(1, "best_first", 1.0, value_calls=20, calls=4), result(2, "best_first", 1.0, sites=("forum",),
                                                                       eval_types=("url_match",)),
    ]
    report = build_report(results, ["a"])
    greedy = next(s for s in report.strategies if s.strategy == "greedy")
    assert (greedy.sr.value, greedy.sr_ua.value) == (0.5, 1.0) and greedy.sr_ac.value == pytest.approx(1 / 3)
    assert (greedy.sr_ac.tasks, greedy.sr_ua.tasks) == (3, 1)
    assert {k: v.value for k, v in greedy.by_site.items()} == {"forum": 0.0, "shop": pytest.approx(2 / 3)}
    assert {k: v.value for k, v in greedy.by_type.items()} == {"information": 1.0, "navigation": 0.0,
                                                              "state change": 0.0}
    best = next(s for s in report.strategies if s.strategy == "best_first")
    assert best.costs.calls == {"policy": 3.0, "value": 10.0}
    assert best.costs.total_tokens == pytest.approx((4000 + 2000 + 16000) / 2 + (200 + 100 + 400) / 2)
    assert report.scores[2] == {"greedy": 0.0, "best_first": 1.0}


def test_folders_merge_and_the_latest_result_of_a_task_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "results.jsonl").write_text(result(1, "greedy", 0.0).model_dump_json() + "\n")
    (second / "results.jsonl").write_text(result(1, "greedy", 1.0).model_dump_json() + "\n"
                                          + result(2, "action_aware", 1.0).model_dump_json() + "\n{torn")
    assert sorted((r.strategy, r.task_id, r.score) for r in load_results([first, second])) == [
        ("action_aware", 2, 1.0), ("greedy", 1, 1.0)]
    report = write_report([first, second], tmp_path / "report")
    assert (tmp_path / "report" / "report.json").exists() and (tmp_path / "report" / "report.md").exists()
    page = (tmp_path / "report" / "report.html").read_text()
    assert page.count("<svg") == 2 and "action_aware" in page and "greedy" in page
    assert [s.strategy for s in report.strategies] == ["action_aware", "greedy"]
    # One strategy's rows only (a table over the strategies an issue asks for).
    only = write_report([first, second], tmp_path / "greedy", strategies=["greedy"])
    assert [s.strategy for s in only.strategies] == ["greedy"] and only.intents == {1: "task 1"}


def test_a_scripted_model_is_flagged_in_the_page() -> None:
    page = render_html(build_report([result(1, "greedy", 1.0, model="scripted")], ["x"]))
    assert "Scripted or simulated model" in page
    assert "Scripted or simulated" not in render_html(build_report([result(1, "greedy", 1.0)], ["x"]))


def test_runs_with_different_models_are_separate_columns_and_labelled_with_the_model() -> None:
    # An E sweep: the same strategy and tasks with the simulated model at two error rates.
    results = [result(1, "greedy", 1.0, model="simulated:0.1"), result(2, "greedy", 1.0, model="simulated:0.1"),
               result(1, "greedy", 0.0, model="simulated:0.5"), result(2, "greedy", 1.0, model="simulated:0.5")]
    report = build_report(results, ["sweep"])
    assert [(s.label, s.sr.value) for s in report.strategies] == [("greedy · simulated:0.1", 1.0),
                                                                  ("greedy · simulated:0.5", 0.5)]
    assert all(s.scripted for s in report.strategies)
    assert report.scores[1] == {"greedy · simulated:0.1": 1.0, "greedy · simulated:0.5": 0.0}
    assert "greedy · simulated:0.5" in render_html(report)
    table = render_markdown(report).split("\n\n")[0].splitlines()
    assert len(table) == 4
    assert table[2].startswith("| greedy · simulated:0.1 | simulated:0.1 (simulated/scripted) | 2 | 100.0% [")
    assert "| 50.0% [" in table[3]


def test_a_task_that_could_not_be_evaluated_is_out_of_the_rates_and_said(tmp_path: Path) -> None:
    unjudged = result(3, "greedy", 0.0).model_copy(update={"eval_error": "the judge model could not be used: 503"})
    timed = {"model_seconds": {"policy": 5.0}, "model_wait_s": 5.0}
    report = build_report([r.model_copy(update=timed) for r in (result(1, "greedy", 1.0), result(2, "greedy", 0.0),
                                                                 unjudged)], ["x"])
    [row] = report.strategies
    assert (row.sr.value, row.sr.tasks, row.not_evaluated) == (0.5, 2, 1)
    # Its run still took its time: the time table counts all three.
    assert "| greedy | 10.0 | 5.0 | 5.0 | – | – | – | 50% | 3 of 3 |" in render_markdown(report)
    table = render_markdown(report)
    assert "- 3 (greedy): the judge model could not be used: 503" in table
    assert "the judge model could not be used: 503" in render_html(report)


def test_runs_with_retrieved_examples_are_a_column_of_their_own(tmp_path: Path) -> None:
    plain = [result(1, "greedy", 0.0), result(2, "greedy", 1.0)]
    taught = [r.model_copy(update={"examples": True, "score": 1.0}) for r in plain]
    for name, results in (("plain", plain), ("demos", taught)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
    loaded = load_results([tmp_path / "plain", tmp_path / "demos"])
    report = build_report(loaded, ["plain", "demos"])
    assert [(s.label, s.sr.value) for s in report.strategies] == [("greedy", 0.5), ("greedy + examples", 1.0)]
    rows = render_markdown(report).splitlines()[2:4]
    assert rows[0].startswith("| greedy | qwen | 2 | 50.0% [") and rows[1].startswith("| greedy + examples | qwen |")


def test_a_temperature_set_over_the_strategys_is_a_row_of_its_own(tmp_path: Path) -> None:
    """`eval --temperature 0` beside the strategy's own, in one folder: neither replaces the other."""
    (tmp_path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in [
        result(1, "greedy", 0.0), result(1, "greedy", 1.0).model_copy(update={"temperature": 0.0}),
        result(2, "greedy", 1.0).model_copy(update={"temperature": 0.0})]))
    report = write_report([tmp_path], tmp_path / "out", common=True)
    assert [(s.label, s.sr.tasks, s.sr.value) for s in report.strategies] == [("greedy", 1, 0.0),
                                                                             ("greedy at T=0", 1, 1.0)]
    assert report.left_out == [2]


def test_named_folders_are_versions_side_by_side_compared_on_the_tasks_both_ran(tmp_path: Path) -> None:
    """Two commits' runs of the same strategy: merged, the later would replace the earlier; named, they are rows of
    their own, and --common keeps the tasks both have."""
    before, after = tmp_path / "before", tmp_path / "after"
    for folder, results in ((before, [result(1, "greedy", 0.0), result(2, "greedy", 0.0)]),
                            (after, [result(1, "greedy", 1.0), result(2, "greedy", 1.0), result(3, "greedy", 1.0)])):
        folder.mkdir()
        (folder / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
    merged = write_report([before, after], tmp_path / "merged")
    assert [(s.label, s.sr.tasks, s.sr.value) for s in merged.strategies] == [("greedy", 3, 1.0)]
    named = write_report([Source(before, "887dbd2"), Source(after, "2ccc8e1")], tmp_path / "named", common=True)
    assert [(s.label, s.sr.tasks, s.sr.value) for s in named.strategies] == [
        ("greedy @ 2ccc8e1", 2, 1.0), ("greedy @ 887dbd2", 2, 0.0)]
    assert named.left_out == [3] and named.sources == [f"887dbd2={before}", f"2ccc8e1={after}"]
    assert "| greedy @ 887dbd2 |" in render_markdown(named)
    # A result never writes its version: a results file is a run's own.
    written = result(1, "greedy", 1.0).model_copy(update={"version": "887dbd2"}).model_dump_json()
    assert "version" not in written and "887dbd2" not in written

    # From the command line: NAME=FOLDER; a path with "=" in it is still a path; one name twice is refused.
    assert report_source(f"887dbd2={before}") == Source(before, "887dbd2")
    assert report_source("/data/a=b/results") == Source(Path("/data/a=b/results"), "")
    assert main(["eval", "report", f"887dbd2={before}", f"2ccc8e1={after}", "--common",
                 "--out", str(tmp_path / "cli")]) == 0
    assert "| greedy @ 2ccc8e1 | qwen | 2 | 100.0% [" in (tmp_path / "cli" / "report.md").read_text()
    assert main(["eval", "report", f"x={before}", f"x={after}", "--out", str(tmp_path / "twice")]) == 2
    assert not (tmp_path / "twice").exists()


def test_common_compares_the_strategies_on_the_tasks_every_one_of_them_ran(tmp_path: Path) -> None:
    """A run stopped part way: greedy has task 3 and best_first does not, so --common leaves 3 out of both rows."""
    results = [result(1, "greedy", 1.0), result(2, "greedy", 0.0), result(3, "greedy", 1.0),
               result(1, "best_first", 0.0), result(2, "best_first", 1.0),
               result(1, "greedy", 1.0).model_copy(update={"examples": True})]
    everything = build_report(results, ["x"])
    assert {s.label: s.sr.tasks for s in everything.strategies} == {"best_first": 2, "greedy": 3,
                                                                     "greedy + examples": 1}
    assert everything.left_out == []
    common = build_report(results, ["x"], common=True)
    assert {s.label: (s.sr.tasks, s.sr.value) for s in common.strategies} == {
        "best_first": (1, 0.0), "greedy": (1, 1.0), "greedy + examples": (1, 1.0)}
    assert common.left_out == [2, 3] and list(common.scores) == [1]
    assert "left out: 2, 3" in render_markdown(common) and "left out: 2, 3" in render_html(common)
    assert "left out" not in render_markdown(everything) + render_html(everything)


def test_the_share_of_prompt_tokens_the_server_had_cached_is_reported() -> None:
    cached = result(1, "best_first", 1.0, calls=2).model_copy(update={"usage": {
        "policy": Usage(calls=2, prompt_tokens=2000, completion_tokens=100, cached_prompt_tokens=1500)}})
    report = build_report([cached, result(2, "best_first", 0.0, calls=2)], ["x"])
    [row] = report.strategies
    assert row.costs.cached_prompt_tokens == {"policy": 750.0} and row.costs.cached_share == pytest.approx(0.375)
    assert "| 38% |" in render_markdown(report) and "<td>38%</td>" in render_html(report)


def test_where_the_time_goes_counts_calls_at_once_once_and_is_measured_again_from_the_store(tmp_path: Path) -> None:
    """A result keeps the seconds its run waited on the model; one whose calls the folder's run store keeps is
    measured again from them (results written before model_wait_s summed calls made at once)."""
    folder = tmp_path / "eval"
    folder.mkdir()
    kept = result(1, "best_first", 1.0).model_copy(update={"model_seconds": {"policy": 6.0, "value": 2.0},
                                                           "model_wait_s": 7.5})
    summed = result(2, "best_first", 0.0).model_copy(update={"run_id": "run2", "model_seconds": {"policy": 4.0}})
    t0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    with RunStore(default_store_path(folder)) as store:
        store.start_run(RunRecord(run_id="run2", task="task 2"))
        # Two policy calls under way at once ([0, 3] and [2.5, 3.5]: 3.5 s of waiting), then a value call ([4, 5]).
        store.add_model_calls([
            ModelCallRecord(run_id="run2", role="policy", seconds=3.0, created_at=t0 + timedelta(seconds=3)),
            ModelCallRecord(run_id="run2", role="policy", seconds=1.0, created_at=t0 + timedelta(seconds=3.5)),
            ModelCallRecord(run_id="run2", role="value", seconds=1.0, created_at=t0 + timedelta(seconds=5))])
    (folder / "results.jsonl").write_text(kept.model_dump_json() + "\n" + summed.model_dump_json() + "\n")
    report = build_report(load_results([folder]), ["x"])
    [row] = report.strategies
    assert row.costs.model_seconds == {"policy": 4.75, "value": 1.5} and row.costs.timed == 2
    assert row.costs.model_wait_s == 6.0  # (7.5 + 4.5) / 2
    assert "| best_first | 10.0 | 6.0 | 4.8 | 1.5 | – | – | 60% | 2 of 2 |" in render_markdown(report)
    assert "<h2>Where the time goes</h2>" in render_html(report)
    # Results that kept no times (and no store to read them from) leave the table out.
    plain = build_report([result(3, "greedy", 1.0)], ["x"])
    assert "Where the time goes" not in render_markdown(plain) and "Where the time goes" not in render_html(plain)


def test_sign_test_is_mcnemars_exact_test() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(3, 3) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32)  # 0.0625: five of five discordant tasks is not yet 5 %
    assert sign_test(0, 6) == pytest.approx(2 / 64)
    assert sign_test(2, 1) == 1.0
    assert sign_test(9, 1) == pytest.approx(2 * 11 / 1024)
    assert sign_test(1, 9) == sign_test(9, 1)
    assert 0 < sign_test(500, 400) < 0.01  # big counts stay exact, no float overflow


def test_every_two_rows_are_compared_head_to_head_on_the_tasks_both_ran(tmp_path: Path) -> None:
    """Only the tasks one row solved and the other did not tell two strategies apart; a task one of them has no result
    for, or could not be evaluated, is not counted."""
    results = [result(1, "greedy", 1.0), result(2, "greedy", 1.0), result(3, "greedy", 0.0), result(4, "greedy", 1.0),
               result(5, "greedy", 1.0),
               result(1, "best_first", 1.0), result(2, "best_first", 0.0), result(3, "best_first", 1.0),
               result(4, "best_first", 0.0),
               result(5, "best_first", 0.0).model_copy(update={"eval_error": "the shop did not start"})]
    report = build_report(results, ["x"])
    [pair] = report.head_to_head
    assert (pair.first, pair.second) == ("best_first", "greedy")
    assert (pair.tasks, pair.both, pair.first_only, pair.second_only) == (4, 1, 1, 2)
    assert pair.p_value == 1.0
    markdown = render_markdown(report)
    assert "| best_first vs greedy | 4 | 1 | 1 | 2 | 1.00 |" in markdown
    assert "Head to head" in render_html(report) and "McNemar" in render_html(report)
    # One row alone has nothing to be compared with.
    alone = build_report([r for r in results if r.strategy == "greedy"], ["x"])
    assert alone.head_to_head == [] and "Head to head" not in render_markdown(alone) + render_html(alone)
