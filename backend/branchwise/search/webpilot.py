"""WebPilot's agents as prompts and readers (Zhang et al., "WebPilot"): the Planner (plan and refined plan), the
Explorer's look back at an action (its effect, child and sibling reflections), the Appraiser (effectiveness and future
promise on 0–10), the Controller (subtask complete? strategic reflection) and the Extractor (the answer, or a scroll).

The Explorer's choice of action is the WebArena policy prompt with the subtask and the reflections added to the
objective (`explorer_objective`), so every model that can drive greedy can drive this. Readers are pure and forgiving
of small models' habits (markdown, run-on lines, "7/10"); what they cannot read they return as None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..chat_model import fill_template, load_prompt
from ..core.tokens import CHARS_PER_TOKEN
from ..llm import ChatMessage
from ..policy.prompts import PromptConfig, newest_lines, observation_within
from ..policy.replies import DECOR, last_field
from .snapshot import without_fragment

# Markdown around a plan's items (bold, headings, bullets), not quotes: an item may end with one.
_MARKUP = r"[\s*_#>-]*"
_SUBTASK = re.compile(rf"{_MARKUP}subtask\s*(\d+)\s*(\(extract\))?{_MARKUP}[:.)]\s*", re.I)
_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(.+)$", re.M)
_EXTRACT = re.compile(rf"^{DECOR}(?:\(extract\)|extract\b)\s*[:\-–]?\s*", re.I)
_SCORE = r"(\d+(?:\.\d+)?)(?:\s*/\s*10)?"
# Anywhere on a line: models number them (`1. Effectiveness: 7`) or put both on one line.
_EFFECTIVENESS = re.compile(rf"\beffectiveness{DECOR}[:：=]{DECOR}{_SCORE}", re.I)
_FUTURE = re.compile(rf"\bfuture\s+promise{DECOR}[:：=]{DECOR}{_SCORE}", re.I)
_COMPLETE = re.compile(rf"^{DECOR}complete{DECOR}[:：=]{DECOR}(yes|no|true|false)\b", re.I | re.M)
# "N/A (not on this page)", a bare "None", "not found": not "None of the orders are pending".
_NOT_AVAILABLE = re.compile(r"^\W*(?:n/?a\b|none\W*$|not (?:found|available|shown)\b)", re.I)
NO_ACTIONS = "(none yet)"
# How a refined plan's prompt begins (the simulated model and the scripted scenarios tell the two plans apart by it).
PLAN_FAILED = "The earlier plan did not work out."


class WebPilotPrompts(BaseModel):
    """How much of the page and the history each agent's prompt shows (tokens)."""

    model_config = ConfigDict(frozen=True)
    max_observation_tokens: int = Field(default=3840, ge=1)
    max_history_tokens: int = Field(default=400, ge=1)

    def fitted(self, prompt: PromptConfig) -> WebPilotPrompts:
        """Sized like the policy prompt (which `PromptConfig.fitted` sized to the model's context)."""
        return self.model_copy(update={"max_observation_tokens": min(self.max_observation_tokens,
                                                                     prompt.max_observation_tokens),
                                       "max_history_tokens": min(self.max_history_tokens, prompt.max_history_tokens)})


@dataclass(frozen=True)
class Subtask:
    text: str
    # Reads information off the page (the Extractor's job) instead of acting.
    extract: bool = False

    def __str__(self) -> str:
        return ("Extract: " if self.extract else "") + self.text


@dataclass(frozen=True)
class Reflection:
    effect: str
    # Advice for the next action from the page the action reached, and for another action instead of it.
    child: str
    sibling: str


@dataclass(frozen=True)
class Control:
    complete: bool
    reflection: str


@dataclass(frozen=True)
class Extraction:
    # The information read; None: not on the page (or the answer was unreadable).
    answer: str | None
    scroll: Literal["up", "down"] | None = None


def _page(observation: str, config: WebPilotPrompts) -> str:
    return observation_within(observation, config.max_observation_tokens)


def _actions(history: Sequence[str], config: WebPilotPrompts) -> str:
    if not history:
        return NO_ACTIONS
    lines = [f"{i}. {action}" for i, action in enumerate(history, start=1)]
    return "\n".join(newest_lines(lines, config.max_history_tokens * CHARS_PER_TOKEN))


def _line(text: str) -> str:
    """A model's text on one line, as the agent's part shows it: a line of its own could read as the mark
    (INSTRUCTIONS_MARK) that the agent's part begins with."""
    return " ".join(text.split())


def _agent_messages(agent: str, task: str, url: str, observation: str, config: WebPilotPrompts,
                    values: dict[str, str]) -> list[ChatMessage]:
    """One agent's prompt, page first: the system message is the same for every agent and the user turn begins with
    the task and the page, so the agents judging one page in a row (the reflection, the Appraiser, the Controller)
    share all but their last few hundred tokens, which a server with a prompt cache (llama.cpp) reads once. The
    agent's own instructions and inputs follow the page."""
    return [ChatMessage(role="system", content=load_prompt("webpilot_system.txt").strip()),
            ChatMessage(role="user", content=fill_template(load_prompt("webpilot_page.txt"), {
                "task": task.strip(), "url": url, "observation": _page(observation, config),
                "agent": fill_template(load_prompt(f"webpilot_{agent}.txt"), values).strip()}).strip())]


def plan_messages(task: str, url: str, observation: str, feedback: str, config: WebPilotPrompts) -> list[ChatMessage]:
    """The Planner's prompt; `feedback` (empty for the first plan) says what was done and what failed."""
    return _agent_messages("planner", task, url, observation, config, {
        "feedback": feedback.strip() + "\n\n" if feedback.strip() else "", "task": _line(task)})


def refine_feedback(done: Sequence[str], failed: Subtask, reflection: str, remaining: Sequence[Subtask]) -> str:
    """What the Planner is told when a subtask could not be completed: the plan is refined from the page the agent
    is on."""
    lines = [PLAN_FAILED]
    if done:
        lines.append("Subtasks completed: " + "; ".join(done))
    lines.append(f"Subtask that failed: {failed}")
    if reflection:
        lines.append(f"Why, and what to do differently: {_line(reflection)}")
    if remaining:
        lines.append("Subtasks that were still to come: " + "; ".join(map(str, remaining)))
    lines.append("The new plan covers only what is left, from the current page.")
    return "\n".join(lines)


def reflect_messages(task: str, subtask: Subtask, action: str, intent: str, before_url: str, url: str,
                     observation: str, config: WebPilotPrompts) -> list[ChatMessage]:
    """`url` and `observation`: the page the action reached. Whether the address changed is said outright: a real
    1.5B model reported "the page changed to the project page" after a click on a heading that left it as it was,
    and the Appraiser and the Controller believed it."""
    return _agent_messages("reflect", task, url, observation, config, {
        "subtask": str(subtask), "action": action, "intent": _line(intent) or "(not said)", "before_url": before_url,
        "moved": " (the address did not change)" if without_fragment(before_url) == without_fragment(url) else ""})


def appraise_messages(task: str, subtask: Subtask, action: str, effect: str, url: str, observation: str,
                      config: WebPilotPrompts) -> list[ChatMessage]:
    return _agent_messages("appraiser", task, url, observation, config, {
        "subtask": str(subtask), "action": action, "effect": _line(effect) or "(not described)"})


def control_messages(task: str, subtask: Subtask, history: Sequence[str], url: str, observation: str,
                     config: WebPilotPrompts) -> list[ChatMessage]:
    return _agent_messages("controller", task, url, observation, config, {
        "subtask": str(subtask), "history": _actions(history, config)})


def extract_messages(task: str, subtask: Subtask, action: str, url: str, observation: str,
                     config: WebPilotPrompts) -> list[ChatMessage]:
    """`action`: the one that led to this page (empty on the starting page)."""
    return _agent_messages("extractor", task, url, observation, config, {
        "subtask": str(subtask), "action": action or "(none yet)"})


def explorer_objective(task: str, subtask: Subtask, reflections: Sequence[str], tried: Sequence[str],
                       refused: str = "") -> str:
    """The objective the Explorer's policy prompt shows: the user's task first (the line every policy prompt starts
    with), then the subtask it works on now, the reflections that apply here, why its last answer here did not work
    (`refused`: refused, tried already, changed nothing) and the actions already tried here."""
    lines = [task.strip(), f"Current subtask: {subtask.text}"]
    lines += [f"Reflection: {r}" for r in reflections if r.strip()]
    if refused:
        lines.append(f"Your last answer here did not work: {refused}. Give a different one.")
    if tried:
        lines.append("Already tried from this page (choose a different action): " + ", ".join(tried))
    return "\n".join(lines)


def _subtask(text: str) -> Subtask | None:
    text = " ".join(text.split()).strip(" *_`")
    if not text:
        return None
    marker = _EXTRACT.match(text)
    return Subtask(text[marker.end():].strip() or text, extract=True) if marker else Subtask(text)


def _numbered_marks(marks: list[re.Match[str]]) -> list[re.Match[str]]:
    """The marks numbered in order from the first one's number: "use the result of subtask 1" inside subtask 2 is
    text, not a third subtask."""
    kept: list[re.Match[str]] = []
    for mark in marks:
        if not kept or int(mark.group(1)) == int(kept[-1].group(1)) + 1:
            kept.append(mark)
    return kept


def parse_plan(text: str) -> list[Subtask]:
    """`Subtask N: ...` items (also run together on one line), else a numbered or bulleted list; [] when neither."""
    marks = _numbered_marks(list(_SUBTASK.finditer(text)))
    if marks:
        parts = [text[m.end(): marks[k + 1].start() if k + 1 < len(marks) else len(text)]
                 for k, m in enumerate(marks)]
        # A plan's text ends at its last line: what follows an item's first line is commentary.
        items = [_subtask(("Extract: " if m.group(2) else "") + (p.strip().splitlines()[0] if p.strip() else ""))
                 for m, p in zip(marks, parts, strict=True)]
    else:
        items = [_subtask(m.group(1)) for m in _NUMBERED.finditer(text)]
    return [s for s in items if s is not None]


def parse_reflection(text: str) -> Reflection:
    """The three lines; a missing one is empty, and a reply with none of them is taken whole as the effect."""
    effect, child, sibling = (last_field(text, n) for n in ("effect", r"child\s+reflection", r"sibling\s+reflection"))
    if effect is None and child is None and sibling is None:
        return Reflection(" ".join(text.split())[:400], "", "")
    return Reflection(effect or "", child or "", sibling or "")


def parse_appraisal(text: str) -> tuple[float, float] | None:
    """(effectiveness, future promise), each clamped to 0–10; None unless both are readable (the last of each)."""
    effectiveness, future = _EFFECTIVENESS.findall(text), _FUTURE.findall(text)
    if not effectiveness or not future:
        return None
    return min(10.0, float(effectiveness[-1])), min(10.0, float(future[-1]))


def parse_control(text: str) -> Control | None:
    """The last `Complete:` verdict and the reflection; None without a readable verdict."""
    verdicts = _COMPLETE.findall(text)
    if not verdicts:
        return None
    return Control(verdicts[-1].lower() in ("yes", "true"), last_field(text, "reflection") or "")


def unread_control(text: str) -> Control:
    """What a Controller reply without a readable verdict is taken to say: not complete, so the subtask is tried
    again, with the reflection it wrote for that try. A real 1.5B Controller wrote the reflection alone in 13 of its 54
    replies over twelve runs, each saying why the subtask was not complete and what to click instead."""
    return Control(False, last_field(text, "reflection") or "")


def parse_extraction(text: str) -> Extraction:
    """`Answer: ...`, else `Scroll: down|up`, else not there (N/A). An answer wins over a scroll written beside it:
    a real 1.5B model ended five of its extractions in two runs with "Answer: 10" and then "Scroll: down", and the
    scrolls, taken, lost the answer."""
    answer, scroll = last_field(text, "answer"), last_field(text, "scroll")
    if answer and not _NOT_AVAILABLE.match(answer):
        return Extraction(answer)
    direction = scroll.lower().split()[0] if scroll and scroll.split() else ""
    if direction in ("up", "down"):
        return Extraction(None, "up" if direction == "up" else "down")
    return Extraction(None)
