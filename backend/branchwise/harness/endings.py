"""How a task's run ended, in a few kinds the evaluation report counts per strategy: where a strategy loses its
tasks (a wrong answer, stuck on invalid actions, out of time...) is what says what would change its result.

Read from the result as written (status, score, answer, reason), so results written before this module are sorted too:
the reasons are the runs' own texts (search/greedy.py, search/best_first.py, search/step.py, core/budget.py).
"""

from __future__ import annotations

from typing import Literal

from .run import TaskResult

Ending = Literal["solved", "wrong answer", "limit reached", "stuck", "nothing better found", "no answer",
                 "failed otherwise", "not evaluated"]

# In the order the report shows them.
ENDINGS: tuple[Ending, ...] = ("solved", "wrong answer", "limit reached", "stuck", "nothing better found",
                               "no answer", "failed otherwise", "not evaluated")

ENDING_NOTES: dict[Ending, str] = {
    "solved": "judged right",
    "wrong answer": "finished with an answer (or on a page, or a site state) judged wrong",
    "limit reached": "a limit (time, model calls, tokens) stopped the search; any answer it then gave was wrong",
    "stuck": "stopped early: invalid actions in a row, or the same action proposed again and again",
    "nothing better found": "the search found no state better than where it started",
    "no answer": "finished without answering a question that needed one",
    "failed otherwise": "the browser, the site or the backend stopped the run, or the user did",
    "not evaluated": "the task could not be set up or judged (out of the rates)",
}

_LIMITS = ("time limit", "model calls are spent", "tokens would be exceeded")


def ending(result: TaskResult) -> Ending:
    if not result.evaluated:
        return "not evaluated"
    if result.score >= 1:
        return "solved"
    reason = result.reason
    if reason.startswith("stopped: ") and any(limit in reason for limit in _LIMITS):
        return "limit reached"
    if "stopped early: " in reason:
        return "stuck"
    if reason.startswith("search found no state better"):
        return "nothing better found"
    if result.status == "finished":
        # A question answered wrong, or a navigation or change task ended on the wrong page or state.
        needs_answer = "string_match" in result.eval_types
        return "no answer" if needs_answer and not result.answer.strip() else "wrong answer"
    return "failed otherwise"


def count_endings(results: list[TaskResult]) -> dict[Ending, int]:
    """How many of the results ended each way (the kinds none did are left out)."""
    counts = {kind: sum(ending(r) == kind for r in results) for kind in ENDINGS}
    return {kind: n for kind, n in counts.items() if n}
