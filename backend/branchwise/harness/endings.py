"""How a task's run ended, in a few kinds the evaluation report counts per strategy: where a strategy loses its
tasks (a wrong answer, stuck on invalid actions, out of time...) is what says what would change its result.

Read from the result as written (status, score, answer, reason), so results written before this module are sorted too:
the reasons are the runs' own texts (search/greedy.py, search/best_first.py, search/step.py, core/budget.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from .run import TaskResult

Ending = Literal["solved", "wrong answer", "no answer", "limit reached", "stuck", "gave up", "failed otherwise",
                 "not evaluated"]

# In the order the report shows them.
ENDINGS: tuple[Ending, ...] = ("solved", "wrong answer", "no answer", "limit reached", "stuck", "gave up",
                               "failed otherwise", "not evaluated")

ENDING_NOTES: dict[Ending, str] = {
    "solved": "judged right",
    "wrong answer": "finished with an answer (or on a page, or a site state) judged wrong",
    "no answer": "finished without answering a question that needed one",
    "limit reached": "a limit (time, model calls, tokens, steps, search rounds, subtasks) stopped the run; any answer "
                     "it then gave was wrong",
    "stuck": "stopped early: answers with no valid action in a row, or the same action proposed again and again",
    "gave up": "the search ran out of ways on: no state better than the start, no candidate left, the plans spent",
    "failed otherwise": "the browser, the site, the model server or the backend stopped the run, or the user did",
    "not evaluated": "the task could not be set up or judged (out of the rates)",
}

# The reasons' own words (search/*.py, core/budget.py, search/urlcheck.py), matched after the "stopped: " a reason may
# start with; the tests hold a reason of each kind as the runs write it.
_LIMITS = ("time limit", "model calls are spent", "tokens would be exceeded", "reached the step limit",
           "no answer after ")
_GAVE_UP = ("search found no state better", " was judged a success, but the model never proposed",
            "no candidate action is left", "subtask not complete after", "the planner gave no new plan")
# A page that did not load: the site, not the model (greedy says so before the invalid actions it led to).
_SITE = ("does not load", "answers HTTP ")


def ending(result: TaskResult) -> Ending:
    if not result.evaluated:
        return "not evaluated"
    if result.score >= 1:
        return "solved"
    # The actions a run was not allowed to run are named after its reason (SearchContext.failed).
    reason = result.reason.split("; not allowed to run ")[0].removeprefix("stopped: ")
    if reason.startswith("stopped early: "):
        return "stuck"
    if any(site in reason.split("; ")[0] for site in _SITE):
        return "failed otherwise"
    if "stopped early: " in reason:
        return "stuck"
    if any(limit in reason for limit in _LIMITS):
        return "limit reached"
    if any(words in reason for words in _GAVE_UP):
        return "gave up"
    if result.status == "finished":
        # A question answered wrong, or a navigation or change task ended on the wrong page or state.
        needs_answer = "string_match" in result.eval_types
        return "no answer" if needs_answer and not result.answer.strip() else "wrong answer"
    return "failed otherwise"


def count_endings(results: list[TaskResult]) -> dict[Ending, int]:
    """How many of the results ended each way (the kinds none did are left out)."""
    counts = Counter(ending(r) for r in results)
    return {kind: counts[kind] for kind in ENDINGS if counts[kind]}
