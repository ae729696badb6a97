"""The simulated model's replies, one function per prompt kind, in the formats the backend parses.

The policy takes the reference step with probability 1 - E and a random action of the page otherwise; the value and
reward judgements are the truth, replaced by a wrong verdict with probability E. A wrong value verdict is a neighbour
of the truth on the scale success / on track / off track: a judge mistakes "nearly done" for "done", not a blank page
for a finished task (with errors drawn uniformly, best_first spent its budget chasing false successes on unrelated
pages). The evaluation judges (fuzzy_match, ua_match) always tell the truth: they measure, they are not under test.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...actions import INFEASIBLE_ANSWER, Action, Click, GoBack, Scroll, Stop, Type
from ...policy.steps import element_words
from ..tasks import SolutionStep, TaskConfig
from .page import TYPEABLE, Page
from .progress import Position, Progress, same_action

_TOKEN = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
_NOT_AVAILABLE = re.compile(r"\bn/?a\b|\bnot\b|\bno\b|cannot|can't|unavailable|does(?: not|n't) exist", re.I)
_CHECKLIST_COUNT = re.compile(r"Checklist \((\d+) milestones?\)")
SUMMARY = "In summary, the next action I will perform is"


@dataclass(frozen=True)
class Known:
    """What the simulated model knows about one task."""

    task: TaskConfig
    progress: Progress

    @property
    def answer(self) -> str:
        return self.task.reference_solution.answer if self.task.reference_solution else ""

    @property
    def seeks_information(self) -> bool:
        return bool(self.answer)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def answer_correct(reference: str, answer: str) -> bool:
    """Every word of the reference is in the answer (an N/A reference: the answer says it is not available)."""
    if reference.strip().upper() == INFEASIBLE_ANSWER:
        return bool(_NOT_AVAILABLE.search(answer))
    wanted = tokens(reference)
    return bool(wanted) and set(wanted) <= set(tokens(answer))


def _cot(thought: str, action: Action) -> str:
    return f"Let's think step-by-step. {thought} {SUMMARY} ```{action.to_text()}```"


def describe(step: SolutionStep) -> str:
    if step.action == "goto":
        return f"Open {step.text}"
    what = f"{step.role} '{step.name}'"
    if step.action == "type":
        return f"Type '{step.text}' into the {what}" + (" and press Enter" if step.enter else "")
    if step.action == "select_option":
        return f"Choose '{step.text}' in the {what}"
    return f"{step.action.replace('_', ' ').capitalize()} the {what}"


def random_action(page: Page, words: Sequence[str], rng: random.Random) -> Action:
    """Any action the page offers, uniformly: an element (typed into if it is a field), a scroll, back, or giving up."""
    options: list[Action] = [Scroll("down"), GoBack(), Stop(INFEASIBLE_ANSWER)]
    for element in page.elements:
        if element.role in TYPEABLE and element.role != "combobox":
            options.append(Type(element.id, rng.choice(words), press_enter=rng.random() < 0.5))
        elif element.interactive:
            options.append(Click(element.id))
    return rng.choice(options)


@dataclass(frozen=True)
class PolicyChoice:
    text: str
    # "reference", "random" or "lost" (off the reference path: going back).
    label: str


def policy_reply(known: Known, page: Page, position: Position, wander: bool, rng: random.Random) -> PolicyChoice:
    """One policy answer; `wander`: this answer is a mistake (drawn with probability E by the caller)."""
    steps = known.progress.steps
    index = position.index
    if wander:
        action = random_action(page, tokens(known.task.intent) or ["test"], rng)
        return PolicyChoice(_cot("Simulated policy: a random action of this page.", action), "random")
    if index == len(steps):
        answer = known.answer or "Done."
        return PolicyChoice(_cot("Simulated policy: the reference solution is complete here.", Stop(answer)),
                            "reference")
    reference = known.progress.action(index, page) if index is not None else None
    if reference is None:
        return PolicyChoice(_cot("Simulated policy: this page is off the reference path; going back.", GoBack()),
                            "lost")
    assert index is not None
    target = next((e for e in page.elements if e.id == reference.element_id), None)
    known.progress.remember(reference, index, element_words(target.role, target.name) if target else "")
    thought = f"Simulated policy: reference step {index + 1} of {len(steps)}: {describe(steps[index])}."
    return PolicyChoice(_cot(thought, reference), "reference")


Verdict = tuple[str, str]
# Ordered from best to worst: a wrong verdict is one step away from the truth.
_VERDICTS: tuple[Verdict, ...] = (("success", "yes"), ("failure", "yes"), ("failure", "no"))


def value_truth(known: Known, position: Position, answer: str | None) -> Verdict:
    """(status, on the right track) as the evaluator would see it."""
    finished = position.index == len(known.progress.steps)
    if known.seeks_information:
        if answer is not None:
            return ("success", "yes") if answer_correct(known.answer, answer) else ("failure", "no")
        return ("failure", "yes") if position.on_path else ("failure", "no")
    if finished:
        return "success", "yes"
    if answer is not None:
        return "failure", "no"  # stopped before the page was reached or the change made
    return ("failure", "yes") if position.on_path else ("failure", "no")


def wrong_verdict(truth: Verdict, rng: random.Random) -> Verdict:
    k = _VERDICTS.index(truth)
    return rng.choice([_VERDICTS[j] for j in (k - 1, k + 1) if 0 <= j < len(_VERDICTS)])


def value_reply(truth: Verdict, wrong: bool, rng: random.Random) -> str:
    verdict = wrong_verdict(truth, rng) if wrong else truth
    note = "a wrong verdict (simulated error)" if wrong else "the true verdict"
    return (f"Thoughts: Simulated judge: {note}.\nStatus: {verdict[0]}\n"
            f"On the right track to success: {verdict[1]}")


def checklist_items(known: Known) -> list[str]:
    items = [describe(step) for step in known.progress.steps]
    if known.seeks_information or not items:
        items.append("Report the answer to the user")
    return items


def checklist_reply(known: Known) -> str:
    blocks = [f"Checklist {k}: {item}\n- {item}." for k, item in enumerate(checklist_items(known), start=1)]
    return "Simulated checklist: the reference solution's steps as milestones.\n" + "\n".join(blocks)


def action_right(known: Known, page: Page, position: Position, proposed: Action | None) -> bool:
    """The proposed action is the reference step here (or, at the end, a stop with the right answer)."""
    if proposed is None or position.index is None:
        return False
    if position.index == len(known.progress.steps):
        return isinstance(proposed, Stop) and (not known.seeks_information
                                                or answer_correct(known.answer, proposed.answer))
    reference = known.progress.action(position.index, page)
    return reference is not None and same_action(proposed, reference)


def reward_reply(known: Known, position: Position, right: bool, prompt_text: str) -> str:
    """Milestones before the position: Yes; the current one: Yes if the action is right; later ones: No."""
    count = _CHECKLIST_COUNT.search(prompt_text)
    items = int(count.group(1)) if count else len(checklist_items(known))
    current = position.index if position.index is not None else -1
    labels = []
    for k in range(items):
        if position.index is None:
            labels.append("No")
        elif k < current or (k == current and right):
            labels.append("Yes")
        else:
            labels.append("No")
    if position.index == len(known.progress.steps) and not right and labels:
        labels[-1] = "No"
    lines = "\n".join(f"Checklist {k}: {label}" for k, label in enumerate(labels, start=1))
    return f"Simulated judge: the proposal {'takes' if right else 'does not take'} the next milestone.\n{lines}"


def rephrase_reply(intent: str) -> str:
    return (f"# REPHRASED TASK:\n{intent}\n# SUBGOALS:\n- {intent}\n# AMBIGUITIES OR ASSUMPTIONS:\n- None noted.\n"
            "# CAUTIONS:\n- Check the page before answering.")


def fuzzy_judge_reply(reference: str, answer: str) -> str:
    verdict = "correct" if answer_correct(reference, answer) else "incorrect"
    return f"Simulated grader (truthful). Conclusion: {verdict}"


def ua_judge_reply(answer: str) -> str:
    return "[same]" if _NOT_AVAILABLE.search(answer) else "[different]"


# WebPilot's agents. The plan is the reference solution one step a subtask (from where the page stands, for a refined
# plan), then an Extract subtask for a question; the Controller, the Extractor and the Appraiser tell the truth unless
# they err.
EXTRACT_SUBTASK = "Extract: the answer to the task from the page"


def plan_reply(known: Known, position: Position) -> str:
    start = position.index or 0
    items = [describe(step) for step in known.progress.steps[start:]]
    if known.seeks_information or not items:
        items.append(EXTRACT_SUBTASK)
    return "Simulated planner: the reference solution's steps.\n" + "\n".join(
        f"Subtask {k}: {item}" for k, item in enumerate(items, start=1))


def subtask_done(known: Known, position: Position, subtask: str) -> bool:
    """The subtask's reference step is taken (a subtask that is no step: the whole solution is)."""
    steps = known.progress.steps
    index = next((k for k, step in enumerate(steps) if describe(step) == subtask.strip()), len(steps) - 1)
    return position.index is not None and position.index > index


def control_reply(done: bool, wrong: bool) -> str:
    verdict = done != wrong
    note = "a wrong verdict (simulated error)" if wrong else "the true verdict"
    reflection = "" if verdict else "the subtask's step has not been taken; take the reference step"
    return f"Simulated controller: {note}.\nComplete: {'yes' if verdict else 'no'}\nReflection: {reflection}"


def extract_reply(known: Known, position: Position, wrong: bool) -> str:
    finished = position.index == len(known.progress.steps)
    if finished != wrong:
        return f"Simulated extractor.\nAnswer: {known.answer or 'Done'}"
    return "Simulated extractor: not on this page.\nAnswer: N/A"


def appraise_reply(right: bool, wrong: bool) -> str:
    good = right != wrong
    effectiveness, future = (8, 9) if good else (2, 2)
    return f"Simulated appraiser.\nEffectiveness: {effectiveness}\nFuture promise: {future}"


REFLECT_REPLY = ("Effect: Simulated explorer: the page changed.\nChild reflection: go on with the reference step\n"
                 "Sibling reflection: another action may be the reference step")
