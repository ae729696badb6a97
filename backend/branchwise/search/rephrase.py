"""WebOperator's task rephraser: restate the task once, with subgoals, ambiguities and cautions, for the policy prompt.

A plain restatement plus explicit subgoals and things to verify helps the policy avoid acting on a misreading of the
task (WebOperator uses it as one of its prompt variations). It runs once per task; a failed parse costs nothing,
because the original task is kept.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..chat_model import ChatModel, system_and_user
from ..llm import ChatMessage

logger = logging.getLogger(__name__)

Section = Literal["task", "subgoals", "ambiguities", "cautions"]

_HEADING = re.compile(
    r"^[ \t>]*(?P<hashes>#+)?[ \t*_]*"
    r"(?P<name>rephrased[ \t]+task|restated[ \t]+task|subgoals?|sub-goals?|"
    r"ambiguities(?:[ \t]+(?:or|and|&)[ \t]+assumptions)?|assumptions|cautions?)"
    r"[ \t*_]*(?P<colon>[:：])?[ \t*_]*(?P<rest>.*)$",
    re.I,
)
_BULLET = re.compile(r"^[ \t]*(?:[-*•]|\d+[.)])[ \t]+")


class RephraseConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    # One call per task whose output steers every later step: deterministic beats diverse here.
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=768, ge=16)
    # Keeps a rambling answer from flooding every policy prompt.
    max_items_per_section: int = Field(default=8, ge=1)


@dataclass(frozen=True)
class Rephrased:
    """`task` is the restatement (the original when none could be read); `parsed` says whether any section was."""

    original: str
    task: str
    subgoals: tuple[str, ...] = ()
    ambiguities: tuple[str, ...] = ()
    cautions: tuple[str, ...] = ()
    parsed: bool = False

    def as_prompt_block(self) -> str:
        """Sections for a policy prompt; empty when the rephraser added nothing to the original task."""
        if not self.parsed:
            return ""
        parts: list[str] = []
        if self.task.strip() and self.task.strip() != self.original.strip():
            parts.append(f"Task restated:\n{self.task}")
        for title, items in (
            ("Subgoals", self.subgoals),
            ("Ambiguities and assumptions to check", self.ambiguities),
            ("Cautions", self.cautions),
        ):
            if items:
                parts.append(title + ":\n" + "\n".join(f"- {item}" for item in items))
        return "\n".join(parts)


def build_rephrase_messages(task: str) -> list[ChatMessage]:
    return system_and_user("rephrase", {"task": task.strip()})


def _section_of(name: str) -> Section:
    lowered = name.lower()
    if "task" in lowered:
        return "task"
    if lowered.startswith("sub"):
        return "subgoals"
    if lowered.startswith("caution"):
        return "cautions"
    return "ambiguities"


def _heading(line: str) -> tuple[Section, str] | None:
    """A section heading, with any text on the same line; a bare word counts only with '#', ':' or nothing after."""
    match = _HEADING.match(line)
    if match is None or _BULLET.match(line):
        return None
    rest = match.group("rest").strip()
    if not (match.group("hashes") or match.group("colon") or not rest):
        return None
    return _section_of(match.group("name")), rest


def parse_rephrase(text: str, original: str = "", *, max_items: int = 8) -> Rephrased:
    """Read the four sections in any order; text before the first heading is ignored.

    `original` is the task as given: it is kept as `task` when the answer has no restatement.
    """
    sections: dict[Section, list[str]] = {}
    current: Section | None = None
    for line in text.splitlines():
        heading = _heading(line)
        if heading is not None:
            current, rest = heading
            sections.setdefault(current, [])
            if rest:
                sections[current].append(rest)
            continue
        if current is not None and line.strip():
            sections[current].append(line)
    if not sections:
        logger.warning("rephraser: no sections in the answer; keeping the original task")
        return Rephrased(original=original, task=original)

    def items(section: Section) -> tuple[str, ...]:
        cleaned = (_BULLET.sub("", line).strip().strip("*_").strip() for line in sections.get(section, []))
        return tuple(item for item in cleaned if item)[:max_items]

    restated = " ".join(_BULLET.sub("", line).strip() for line in sections.get("task", [])).strip()
    return Rephrased(
        original=original,
        task=restated or original,
        subgoals=items("subgoals"),
        ambiguities=items("ambiguities"),
        cautions=items("cautions"),
        parsed=True,
    )


async def rephrase(model: ChatModel, task: str, config: RephraseConfig | None = None) -> Rephrased:
    config = config or RephraseConfig()
    completion = await model.complete(
        build_rephrase_messages(task), temperature=config.temperature, max_tokens=config.max_tokens
    )
    result = parse_rephrase(completion.text, task, max_items=config.max_items_per_section)
    logger.info("rephrased task: %s (%d subgoals)", result.task, len(result.subgoals))
    return result
