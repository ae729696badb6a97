"""What a request asks: which role's prompt it is (known by the first line of the prompt files the backend sends: a
message's first line, or for WebPilot's agents the line after the page) and the parts the simulated model answers
from: the page, the last action taken, the proposed action, the answer given."""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Literal

from ...actions import SECRET_MASK, Action, ActionParseError, Stop, parse_action
from ...chat_model import load_prompt, split_instructions
from ...policy.prompts import NO_PREVIOUS_ACTION
from ...scripted_model import Prompt
from ...search.reward import NO_TRAJECTORY
from ...search.value import NO_ANSWER, NO_HISTORY
from ...search.webpilot import PLAN_FAILED
from .page import QUOTED, unquote
from .progress import MASK_CHAR, Signature, signature

PromptKind = Literal["policy", "value", "checklist", "reward", "rephrase", "fuzzy_judge", "ua_judge", "planner",
                     "reflect", "appraiser", "controller", "extractor", "unknown"]

# The prompt file whose first line marks each kind (a system message, the judges' user message, or WebPilot's agent
# part after the page: every WebPilot agent shares one system message).
_MARKERS: tuple[tuple[PromptKind, str], ...] = (
    ("policy", "webarena_cot_system.txt"),
    ("value", "value_system.txt"),
    ("checklist", "reward_checklist_system.txt"),
    ("reward", "reward_judge_system.txt"),
    ("rephrase", "rephrase_system.txt"),
    ("fuzzy_judge", "webarena_fuzzy_judge_user.txt"),
    ("ua_judge", "webarena_ua_judge_user.txt"),
    ("planner", "webpilot_planner.txt"),
    ("reflect", "webpilot_reflect.txt"),
    ("appraiser", "webpilot_appraiser.txt"),
    ("controller", "webpilot_controller.txt"),
    ("extractor", "webpilot_extractor.txt"),
)
_NUMBERED = re.compile(r"^\d+\. (?P<action>.+?)(?: \(seen: .*\))?$")
_SEEN = " (seen: "
_FAILED = " (it failed: "
_UNCHANGED = " (done, but the page did not change)"
_QUOTE = f"(?:{QUOTED})"
# policy/steps.py's words for each kind of action a history holds (a stop ends it).
_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"clicked (?P<element>.+)"), "Click"),
    (re.compile(r"hovered over (?P<element>.+)"), "Hover"),
    (re.compile(rf"typed (?P<text>{_QUOTE}) into (?P<element>.+?)(?: and pressed Enter)?"), "Type"),
    (re.compile(rf"selected (?P<values>{_QUOTE}(?:, {_QUOTE})*) in (?P<element>.+)"), "SelectOption"),
    (re.compile(r"pressed \S+(?: on (?P<element>.+))?"), "Press"),
    (re.compile(r"scrolled (?:up|down)"), "Scroll"),
    (re.compile(r"went to (?P<url>.+)"), "Goto"),
    (re.compile(r"went back"), "GoBack"),
    (re.compile(r"went forward"), "GoForward"),
    (re.compile(r"opened a new tab(?: at .+)?"), "NewTab"),
    (re.compile(r"switched to tab \d+"), "TabFocus"),
    (re.compile(r"closed the tab"), "CloseTab"),
)
# Where each kind of prompt names the task (the rest of the prompt may quote other tasks: retrieved examples).
_TASK_FIELDS = ("OBJECTIVE:", "User task:", "Task:", "question:", "Task_1 =")


@functools.cache
def _first_lines() -> tuple[tuple[PromptKind, str], ...]:
    return tuple((kind, load_prompt(name).strip().splitlines()[0].strip()) for kind, name in _MARKERS)


def _agent_turn(prompt: Prompt) -> str:
    """The last user turn that names its agent after the instructions mark (a WebPilot agent asked again, after the
    reason its answer was refused, has a turn without one last), else the last user turn."""
    return next((m.text for m in reversed(prompt.messages) if m.role == "user" and split_instructions(m.text)[1]),
                prompt.last_user)


def prompt_kind(prompt: Prompt) -> PromptKind:
    heads = {m.text.strip().splitlines()[0].strip() for m in prompt.messages if m.text.strip()}
    agent = (split_instructions(_agent_turn(prompt))[1] or "").strip()
    if agent:
        heads.add(agent.splitlines()[0].strip())
    return next((kind for kind, line in _first_lines() if line in heads), "unknown")


def _between(text: str, start: str, end: str | None = None) -> str | None:
    at = text.find(start)
    if at < 0:
        return None
    rest = text[at + len(start):]
    if end is not None and end in rest:
        rest = rest[: rest.index(end)]
    return rest.strip()


def _last_step(block: str | None) -> Signature | None:
    """The last action of a history block: one action (`PREVIOUS ACTION: clicked link 'Orders'`) or a numbered list,
    written as an action (`click [3]`) or in words (policy/steps.py). Stops are skipped (a stop does not move the
    browser), and so is anything unreadable (`None`, a note about a bad answer)."""
    if not block:
        return None
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    for line in reversed(lines):
        if _FAILED in line:
            return None  # greedy's note on an action the page refused: it was not taken
        numbered = _NUMBERED.match(line)
        text = numbered["action"] if numbered else line
        for note in (_SEEN, _UNCHANGED):
            if note in text:
                text = text[: text.index(note)]
        step = _step_in_words(text)
        if step is None:
            try:
                action = parse_action(text)
            except ActionParseError:
                continue
            step = None if isinstance(action, Stop) else signature(action)
        if step is not None:
            return step
    return None


def _unquoted(text: str) -> list[str]:
    """The strings `observation.render.quote` wrote into `text`."""
    return [unquote(m[0]) for m in re.finditer(QUOTED, text)]


def _step_in_words(text: str) -> Signature | None:
    """A step as policy/steps.py writes it, as the signature of the action on the element it names; None for any
    other text (an answer given, or an action as written)."""
    for pattern, kind in _WORDS:
        m = pattern.fullmatch(text)
        if m is None:
            continue
        found = m.groupdict()
        element = found.get("element")
        if kind == "Type":
            typed = next(iter(_unquoted(found["text"])), "")
            content = SECRET_MASK if MASK_CHAR in typed else typed
        elif kind == "SelectOption":
            content = "|".join(_unquoted(found["values"]))
        else:
            content = found.get("url") or ""
        return kind, element, content
    return None


def _parse(text: str | None) -> Action | None:
    try:
        return parse_action(text) if text else None
    except ActionParseError:
        return None


@dataclass(frozen=True)
class Request:
    """A prompt as the simulated model reads it. `page` is the text holding the observation (with its URL line)."""

    kind: PromptKind
    page: str = ""
    # The action that led to this page, as the prompt shows it; None on the starting page (or when it does not say).
    last_step: Signature | None = None
    # No action has been taken yet: the task's starting page.
    start: bool = False
    # The task as the prompt states it (its first line: a rephrasing or examples may follow).
    task: str = ""
    answer: str | None = None
    proposed: Action | None = None
    reference: str = ""
    # WebPilot's subtask the prompt is about ("" for other prompts).
    subtask: str = ""


def task_of(text: str, fields: tuple[str, ...] = _TASK_FIELDS) -> str:
    """The task named in a prompt's own field (its first line: a rephrasing or retrieved examples may follow):
    `OBJECTIVE: ...` (policy), `User task: ...`, `Task: ...`, `question: ...` or `Task_1 = ...`."""
    for line in text.splitlines():
        for field in fields:
            if line.startswith(field):
                return line[len(field):].strip()
    return ""


def read_request(prompt: Prompt) -> Request:
    request = _read(prompt)
    fields = ("OBJECTIVE:",) if request.kind == "policy" else _TASK_FIELDS
    return dataclasses.replace(request, task=task_of(_task_turn(prompt), fields))


def _task_turn(prompt: Prompt) -> str:
    users = [m.text for m in prompt.messages if m.role == "user"]
    showing = [text for text in users if "OBSERVATION:" in text]
    return (showing or users or [""])[-1]


def _read(prompt: Prompt) -> Request:
    kind = prompt_kind(prompt)
    if kind == "policy":
        # The last turn showing a page: a retry after an invalid answer adds turns without one.
        turn = next((m.text for m in reversed(prompt.messages) if m.role == "user" and "OBSERVATION:" in m.text), "")
        history = _between(turn, "PREVIOUS ACTION:")
        return Request(kind, page=turn, last_step=_last_step(history), start=history == NO_PREVIOUS_ACTION)
    user = prompt.last_user
    if kind == "value":
        history = _between(user, "Actions taken so far:", "Agent's answer to the user:")
        answer = _between(user, "Agent's answer to the user:", "\nCurrent URL:")
        return Request(kind, page=_between(user, "Current page (accessibility tree):") or "",
                       last_step=_last_step(history), start=history == NO_HISTORY,
                       answer=None if answer in (None, NO_ANSWER) else answer)
    if kind == "reward":
        history = _between(user, "Previous steps:", "\nCurrent page")
        proposed = (_between(user, "\nACTION:") or "").splitlines()
        return Request(kind, page=_between(user, "Current page", "\nChecklist (") or "",
                       last_step=_last_step(history), start=history == NO_TRAJECTORY,
                       proposed=_parse(proposed[0] if proposed else None))
    if kind in ("planner", "appraiser", "controller", "extractor", "reflect"):
        return _read_webpilot(kind, _agent_turn(prompt))
    if kind == "fuzzy_judge":
        return Request(kind, answer=_between(user, "student answer:", "\nConclude the judgement") or "",
                       reference=_between(user, "reference answer:", "\n") or "")
    if kind == "ua_judge":
        return Request(kind, answer=_between(user, "Report_1 =", "\nreturn [same]") or "",
                       reference=_between(user, "Reason_1 =", "\nReport_1") or "")
    return Request(kind)


def _read_webpilot(kind: PromptKind, user: str) -> Request:
    """WebPilot's agents: the page after `Current URL:` (up to the agent's part), the action just taken (`Action
    taken:`, or the last of the Controller's numbered list) and the subtask."""
    head, instructions = split_instructions(user)
    agent = instructions or ""
    subtask = (_between(agent, "Subtask:", "\n") or "").strip()
    page = "URL: " + (_between(head, "Current URL:") or "")
    if kind == "controller":
        last = _last_step(_between(agent, "Actions taken for this subtask:", "\n\n"))
    else:
        last = _last_step(_between(agent, "Action taken:", "\n"))
    # The first plan is made on the task's starting page; a refined one says the earlier plan did not work out.
    first_plan = kind == "planner" and PLAN_FAILED not in user
    return Request(kind, page=page, last_step=last, start=first_plan, subtask=subtask)
