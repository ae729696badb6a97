"""How a run ended, sorted from the result as written: the reasons below are the texts real runs wrote (the
local-model bench's results), so a reworded reason shows up here rather than as a silently wrong report."""

from __future__ import annotations

import pytest

from branchwise.harness.endings import count_endings, ending
from branchwise.harness.report import build_report, render_html, render_markdown
from branchwise.harness.run import TaskResult


def result(status: str, score: float, answer: str = "", reason: str = "", *, eval_types: tuple[str, ...] = (
        "string_match",), eval_error: str = "", strategy: str = "greedy") -> TaskResult:
    return TaskResult.model_validate(dict(
        task_id=1, intent="t", sites=["shopping"], eval_types=list(eval_types), unachievable=False,
        strategy=strategy, model="qwen", scripted_model=False, approvals="all", status=status, answer=answer,
        final_url="", score=score, parts={}, reason=reason, eval_error=eval_error, run_id="r", steps=2, backtracks=0,
        approvals_asked=0, usage={}, wall_s=1.0))


@pytest.mark.parametrize(("case", "expected"), [
    (result("finished", 1.0, "18"), "solved"),
    (result("finished", 0.0, "119.95"), "wrong answer"),
    (result("finished", 0.0, eval_types=("url_match",)), "wrong answer"),
    (result("finished", 0.0, ""), "no answer"),
    (result("finished", 0.0, "19", "stopped: the run's time limit (15m00s) is reached (used 43/150 calls, "
            "125,418/600,000 tokens); answered with the best answer the search had found (#9, scored 0.70, read on "
            "#4 http://shop/)"), "limit reached"),
    (result("failed", 0.0, "", "stopped: the run's 150 model calls are spent (used 150/150 calls)"), "limit reached"),
    (result("failed", 0.0, "", "reached the step limit (10) without an answer"), "limit reached"),
    (result("failed", 0.0, "", "no answer after 8 search rounds"), "limit reached"),
    (result("failed", 0.0, "", "stopped early: 3 invalid actions in a row (last: not run: there is no element "
            "[375] on this page)"), "stuck"),
    (result("failed", 0.0, "", "stopped early: `hover [13]` was proposed 3 times on the same page"), "stuck"),
    (result("failed", 0.0, "", "stopped early: 3 answers in a row with no valid action (last: invalid answer: "
            "Unknown action 'i'.)"), "stuck"),
    (result("failed", 0.0, "", "stopped: http://127.0.0.1:40001/cart/add does not load (the browser shows its error "
            "page: no connection or no such host); stopped early: 3 invalid actions in a row (last: ...)"),
     "failed otherwise"),
    (result("failed", 0.0, "", "search found no state better than where it started"), "gave up"),
    (result("failed", 0.0, "", "search found no state better than where it started; not allowed to run "
            "`click [4]`"), "gave up"),
    (result("failed", 0.0, "", "#7 was judged a success, but the model never proposed to stop there"), "gave up"),
    (result("failed", 0.0, "", "no candidate action is left to try"), "gave up"),
    (result("finished", 0.0, "N/A", "subtask not complete after 3 refined plans: find the issue: the information was "
            "not found"), "gave up"),
    (result("failed", 0.0, "", "the planner gave no new plan after subtask `open the forum` failed"), "gave up"),
    (result("failed", 0.0, "", "stopped: the working tab was closed; nothing more was done"), "failed otherwise"),
    (result("failed", 0.0, "", "the model could not be used: The model at http://x/v1 sent nothing for 60s"),
     "failed otherwise"),
    (result("stopped", 0.0, "", "stopped by the user"), "failed otherwise"),
    (result("failed", 0.0, eval_error="setup: the shop could not start"), "not evaluated"),
])
def test_a_run_is_sorted_by_how_it_ended(case: TaskResult, expected: str) -> None:
    assert ending(case) == expected


def test_the_report_counts_each_strategys_endings_in_html_and_markdown() -> None:
    results = [result("finished", 1.0, "18"), result("finished", 0.0, "7", strategy="best_first"),
               result("failed", 0.0, reason="search found no state better than where it started",
                      strategy="best_first")]
    assert count_endings(results[1:]) == {"wrong answer": 1, "gave up": 1}
    report = build_report(results, ["x"])
    assert "| ending | best_first | greedy |" in render_markdown(report)
    assert "| gave up | 1 | 0 |" in render_markdown(report)
    assert "| solved | 0 | 1 |" in render_markdown(report)
    assert "<h2>How the runs ended</h2>" in render_html(report)
