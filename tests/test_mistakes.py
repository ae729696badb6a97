"""Small models' mistakes, counted per role and kind: fed back where the model can correct itself, reported at the
end of a run (progress line and result) and, per task, in the eval report."""

from __future__ import annotations

import asyncio
import io

from branchwise.agent.reporting import TerminalReporter
from branchwise.core.mistakes import describe_mistakes
from branchwise.core.usage import Usage
from branchwise.harness.report import build_report, render_html, render_markdown
from branchwise.harness.run import TaskResult

from agents import greedy_agent
from fake_models import FakeModel
from fake_site import SiteEnv, act


def test_a_run_reports_the_models_mistakes_and_feeds_them_back() -> None:
    """A made-up element id, then an answer with two actions (the first is taken), then nothing readable."""
    model = FakeModel.queue(act("click [99]"), act("click [1] click [2]"), "I do not know.", "Nothing.", "No.")
    out = io.StringIO()
    result = asyncio.run(greedy_agent(model, max_steps=5).run("Find the year", SiteEnv(),  # type: ignore[arg-type]
                                                               TerminalReporter(out)))
    assert result.mistakes == {"policy": {"unknown_element": 1, "several_actions": 1, "unparseable": 3}}
    assert ("policy model mistakes: element ids not on the page: 1, answers with several actions (the first taken): "
            "1, answers with no valid action: 3") in out.getvalue()
    assert "there is no element [99]" in model.calls[1].last


def test_describe_names_each_kind_with_its_count() -> None:
    assert describe_mistakes({"unparseable": 2, "unknown_element": 0, "unreadable_verdict": 1}) == (
        "answers with no valid action: 2, unreadable verdicts: 1")
    assert describe_mistakes({}) == ""


def result(task_id: int, mistakes: dict[str, dict[str, int]]) -> TaskResult:
    return TaskResult.model_validate(dict(
        task_id=task_id, intent=f"task {task_id}", sites=["shop"], eval_types=["string_match"], unachievable=False,
        strategy="greedy", model="qwen", scripted_model=False, approvals="none", status="failed", answer="",
        final_url="", score=0.0, parts={}, run_id="r", steps=3, backtracks=0, approvals_asked=0,
        usage={"policy": Usage(calls=3)}, wall_s=10.0, mistakes=mistakes))


def test_the_eval_report_gives_mistakes_per_task_by_role_and_kind() -> None:
    report = build_report([result(1, {"policy": {"unknown_element": 3, "unparseable": 1}}),
                           result(2, {"policy": {"unknown_element": 1}, "reward": {"unreadable_verdict": 2}})], ["x"])
    [greedy] = report.strategies
    assert greedy.costs.mistakes == {"policy": {"unknown_element": 2.0, "unparseable": 0.5},
                                     "reward": {"unreadable_verdict": 1.0}}
    assert greedy.costs.mistakes_total == 3.5
    assert render_markdown(report).splitlines()[2].endswith("| 3.5 |")
    page = render_html(report)
    assert "<h2>The models' mistakes</h2>" in page
    assert "<td>policy: element ids not on the page</td><td>2.0</td>" in page
