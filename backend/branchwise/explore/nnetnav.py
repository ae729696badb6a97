"""NNetNav's agents as prompts and readers (Murty et al., "NNetNav"): the exploration policy's objective (a persona),
the state-change summariser, the instruction labeller, the outcome reward model (1–5) and the relabeller that writes
each kept step's reasoning for the instruction. Readers are pure and return None for what they cannot read."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..chat_model import system_and_user
from ..llm import ChatMessage
from ..policy.prompts import observation_within
from ..policy.replies import DECOR, VALUE_DECOR, last_field

# Who the exploration policy pretends to be: NNetNav samples a persona per episode so that exploration covers what
# different users do on a site.
PERSONAS: tuple[str, ...] = (
    "a shopper comparing prices before buying a gift",
    "a new user finding out what the site offers",
    "someone looking for one specific item by name",
    "a careful reader checking details such as dates, counts and statuses",
    "a person who browses by category and sorts lists",
    "a user looking up their own account's history",
    "someone searching for help or contact information",
    "a power user who filters and pages through long lists",
)

_SCORE = re.compile(rf"^{DECOR}score{DECOR}[:：=]{DECOR}([1-5])(?:\.0+)?\s*(?:/\s*5)?\b", re.I | re.M)
_BARE_SCORE = re.compile(rf"^{DECOR}([1-5])(?:\.0+)?\s*(?:/\s*5)?{DECOR}$")
_STEP = re.compile(rf"^{DECOR}step\s*(\d+){DECOR}[:.)]\s*(.+)$", re.I | re.M)
_NONE = re.compile(r"^\W*(n/?a|none|-)?\W*$", re.I)
# An answer line a labeller filled in for an instruction that asks nothing: "None (not a question)", "<the answer>",
# or the start of steps that do not follow ("To find it on the website, you can follow these steps:", a real one).
_NO_ANSWER = re.compile(r"^\W*(?:n/?a\b|none\b|not applicable\b|no answer\b|-+\W*$|<)|^\s*$|^.*[:：]\s*$", re.I)


class NNetNavPrompts(BaseModel):
    model_config = ConfigDict(frozen=True)
    # The page each judge sees; the steps as lines of at most this many characters.
    max_observation_tokens: int = Field(default=1500, ge=1)
    step_chars: int = Field(default=300, ge=40)


@dataclass(frozen=True)
class Step:
    """One explored step as the judges see it: the action, the page it was taken on and what it changed."""

    url: str
    action: str
    change: str


@dataclass(frozen=True)
class Label:
    instruction: str
    # The answer to a question the steps answer, "" for an instruction that is done by the steps.
    answer: str = ""


def explore_objective(persona: str, site: str, min_actions: int = 4) -> str:
    """The exploration policy's objective: act as `persona` would on the site, changing nothing, for at least
    `min_actions` actions (NNetNav: 4, the steps before the first labelling)."""
    return (f"Explore the website {site} as {persona} would: open pages, search, filter, sort and read. Act as that "
            "person, one realistic thing after another. Do not sign up, sign in, buy, post, subscribe or change "
            f"anything. Take at least {min_actions} actions; when there is nothing more worth exploring, answer "
            "stop [done].")


def _page(observation: str, config: NNetNavPrompts) -> str:
    return observation_within(observation, config.max_observation_tokens)


def _steps(steps: Sequence[Step], config: NNetNavPrompts) -> str:
    lines = []
    for k, step in enumerate(steps, start=1):
        line = f"{k}. {step.action} (on {step.url}) -> {step.change or 'no change described'}"
        lines.append(line if len(line) <= config.step_chars else line[: config.step_chars - 1] + "…")
    return "\n".join(lines)


def summary_messages(before_url: str, before: str, action: str, url: str, observation: str,
                     config: NNetNavPrompts) -> list[ChatMessage]:
    return system_and_user("nnetnav_summary", {
        "before_url": before_url, "before": _page(before, config), "action": action, "url": url,
        "observation": _page(observation, config)})


def label_messages(site: str, steps: Sequence[Step], url: str, observation: str,
                   config: NNetNavPrompts) -> list[ChatMessage]:
    return system_and_user("nnetnav_label", {
        "site": site, "steps": _steps(steps, config), "url": url, "observation": _page(observation, config)})


def reward_messages(instruction: str, steps: Sequence[Step], url: str, observation: str,
                    config: NNetNavPrompts) -> list[ChatMessage]:
    return system_and_user("nnetnav_reward", {
        "instruction": instruction, "steps": _steps(steps, config), "url": url,
        "observation": _page(observation, config)})


def relabel_messages(instruction: str, steps: Sequence[Step], config: NNetNavPrompts) -> list[ChatMessage]:
    return system_and_user("nnetnav_relabel", {
        "instruction": instruction, "steps": _steps(steps, config)})


def parse_change(text: str) -> str:
    """The `State change:` line, else the whole reply on one line (a summary is never unreadable, only worse)."""
    return last_field(text, r"state\s+change") or " ".join(text.split())[:300]


def parse_label(text: str) -> Label | None:
    """The `Instruction:` line (or `Question:`, `Task:`), else a reply that is one question and nothing more, as a
    small model answers too; None for none, or for the prompt's own placeholder."""
    instruction = last_field(text, "(?:instruction|question|task)")
    if instruction is None:
        bare = text.strip().strip(VALUE_DECOR)
        instruction = bare if "\n" not in bare and bare.endswith("?") else None
    if not instruction or _NONE.match(instruction) or instruction.startswith("<"):
        return None
    answer = last_field(text, "answer") or ""
    return Label(instruction, "" if _NO_ANSWER.match(answer) else answer)


def parse_score(text: str) -> int | None:
    """The last `Score:` from 1 to 5, or a reply that is that number alone (the real 1.5B reward model answered "4");
    None without one."""
    found = _SCORE.findall(text) or _BARE_SCORE.findall(text)
    return int(found[-1]) if found else None


def parse_relabel(text: str, count: int) -> list[str]:
    """The reasoning for steps 1..count (the last line for each number wins); "" where a step has none."""
    reasons: dict[int, str] = {}
    for number, reason in _STEP.findall(text):
        reasons[int(number)] = " ".join(reason.split()).strip(" *_`")
    return [reasons.get(k, "") for k in range(1, count + 1)]
