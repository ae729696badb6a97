"""WebOperator's checklist process reward model: score a proposed action BEFORE running it.

Running an action on a live site to find out whether it helps is slow and may be irreversible, so the reward is
predicted. Once per task the model writes a checklist of milestones; for every candidate action a judge labels each
milestone Yes / In Progress / No. With token logprobs the labels become soft probabilities (a verbalizer, as in
WebShepherd): r_k = P(Yes) + 0.5 * P(In Progress), read at the token where item k's label starts in the judge's final
lines, and the reward is the mean over items. Servers without logprobs get the same score from sampled answers.
"""

from __future__ import annotations

import bisect
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..chat_model import ChatModel, system_and_user
from ..llm import ChatMessage, LLMError, TokenLogprob
from ..policy.prompts import PromptConfig, truncate_observation

logger = logging.getLogger(__name__)

RewardMethod = Literal["logprobs", "sampling", "unparseable"]
Label = Literal["yes", "in_progress", "no"]

LABEL_SCORES: Mapping[Label, float] = MappingProxyType({"yes": 1.0, "in_progress": 0.5, "no": 0.0})
DEFAULT_MAX_CHECKLIST_ITEMS = 10
NO_TRAJECTORY = "(none: this is the first step)"
NO_PROGRESS = "(none judged yet)"

# Markdown a model may wrap around list markers, numbers and labels.
_LEAD = r"^[ \t>*_#-]*"
# A final answer line, "Checklist 3: In Progress". Anchored at a line start so a label word inside the summary
# paragraph is never taken for a verdict; when a number repeats, the last line wins.
_LABEL_LINE = re.compile(
    _LEAD + r"checklist[ \t]*(?:item[ \t]*)?#?(?P<num>\d+)[ \t*_]*[:：.)-][ \t*_\"'`“”]*"
    r"(?P<label>yes|in[ \t_-]*progress|no)\b",
    re.I | re.M,
)
_CHECKLIST_HEAD = re.compile(
    _LEAD + r"checklist[ \t]*(?:item[ \t]*)?#?\d+[ \t*_]*[:：.)-]?[ \t*_]*(?P<title>.*)$", re.I
)
_NUMBERED_HEAD = re.compile(r"^[ \t*_#]*\d+[.)][ \t]+(?P<title>\S.*)$")
_BULLET = re.compile(r"^[ \t]*[-*•][ \t]+(?P<text>\S.*)$")
# Characters around a label token that do not change which label it is: spaces, quotes, markdown, punctuation.
_TOKEN_NOISE = " \t\r\n\"'`*_:：-“”"
# The first word of a label's first token: "In" starts "In Progress"; some tokenizers keep "InProgress" whole.
_FIRST_WORDS: Mapping[str, Label] = MappingProxyType(
    {"yes": "yes", "no": "no", "in": "in_progress", "inprogress": "in_progress"}
)


class RewardConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    # WebOperator's reward model runs at T=1.0 and asks for the 10 most likely alternatives per token.
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_logprobs: int = Field(default=10, ge=1, le=20)
    # Without logprobs, the mean label score over this many sampled answers stands in for the soft probabilities;
    # 5 keeps the cost near one action proposal while giving scores in steps of 0.1 per item.
    n_fallback: int = Field(default=5, ge=1)
    max_tokens: int = Field(default=512, ge=16)
    # The checklist is written once per task; 0.7 is WebOperator's generation temperature.
    checklist_temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    checklist_max_tokens: int = Field(default=768, ge=16)
    # A runaway list would dilute every item's weight in the mean; real checklists have two to six items.
    max_checklist_items: int = Field(default=DEFAULT_MAX_CHECKLIST_ITEMS, ge=1)
    max_observation_tokens: int = Field(default=3840, ge=1)
    keep_text_chars: int = Field(default=600, ge=0)


@dataclass(frozen=True)
class RewardScore:
    """reward in [0, 1] is the mean of item_scores; item_scores is empty when no answer could be read."""

    reward: float
    item_scores: tuple[float, ...]
    method: RewardMethod
    samples: tuple[str, ...]


def _observation(text: str, config: RewardConfig) -> str:
    return truncate_observation(text, PromptConfig(max_observation_tokens=config.max_observation_tokens)).rstrip()


def _clean(text: str) -> str:
    return text.strip().strip("*_").strip()


def format_checklist(checklist: Sequence[str]) -> str:
    return "\n".join(f"Checklist {i}: {item}" for i, item in enumerate(checklist, start=1))


def build_checklist_messages(
    task: str, start_url: str, observation_text: str, *, config: RewardConfig | None = None
) -> list[ChatMessage]:
    config = config or RewardConfig()
    return system_and_user(
        "reward_checklist",
        {"task": task.strip(), "url": start_url, "observation": _observation(observation_text, config)},
    )


def parse_checklist(text: str, *, max_items: int = DEFAULT_MAX_CHECKLIST_ITEMS) -> list[str]:
    """Items as "title - description" from "Checklist k: title" blocks (or a numbered list if there are none).

    Only bullet lines, or the line right below a title, count as its description, so trailing notes are not glued
    onto the last item. Returns [] when nothing is found; the caller decides what to use instead.
    """
    lines = text.splitlines()
    head = _CHECKLIST_HEAD
    if not any(head.match(line) for line in lines):
        head = _NUMBERED_HEAD
    items: list[tuple[str, list[str]]] = []
    after_title = False
    for line in lines:
        match = head.match(line)
        if match:
            items.append((_clean(match.group("title")), []))
            after_title = True
            continue
        if not items or not line.strip():
            after_title = False
            continue
        bullet = _BULLET.match(line)
        if bullet:
            items[-1][1].append(_clean(bullet.group("text")))
        elif after_title:
            items[-1][1].append(_clean(line))
        after_title = False
    result: list[str] = []
    for title, description in items:
        parts = [p for p in (title, " ".join(d for d in description if d)) if p]
        if parts:
            result.append(" - ".join(parts))
    if len(result) > max_items:
        logger.info("checklist: keeping the first %d of %d items", max_items, len(result))
    return result[:max_items]


async def generate_checklist(
    model: ChatModel, config: RewardConfig, task: str, url: str, observation: str
) -> list[str]:
    """Once per task, from the starting page; falls back to the task itself as the only item."""
    completion = await model.complete(
        build_checklist_messages(task, url, observation, config=config),
        temperature=config.checklist_temperature,
        max_tokens=config.checklist_max_tokens,
    )
    items = parse_checklist(completion.text, max_items=config.max_checklist_items)
    if not items:
        logger.warning("checklist: no items in the model's answer; using the task as the only item")
        return [task.strip()]
    logger.info("checklist with %d items: %s", len(items), "; ".join(items))
    return items


def progress_text(checklist: Sequence[str], progress: Sequence[float]) -> str:
    """WebOperator's "last step checklist completion": the judge's item scores for the step that led here, as labels
    (an item score is P(Yes) + 0.5 P(In Progress), so thirds split it back into the three labels)."""
    if not progress or len(progress) != len(checklist):
        return NO_PROGRESS

    def label(score: float) -> str:
        return "Yes" if score >= 2 / 3 else "In Progress" if score >= 1 / 3 else "No"

    return "\n".join(f"{i}. {_clean(item)}: {label(score)}"
                     for i, (item, score) in enumerate(zip(checklist, progress, strict=True), start=1))


def build_judge_messages(
    task: str,
    trajectory: Sequence[str],
    observation_text: str,
    checklist: Sequence[str],
    thought: str,
    action_text: str,
    *,
    progress: Sequence[float] = (),
    config: RewardConfig | None = None,
) -> list[ChatMessage]:
    """Summary paragraph first, then the fixed "Checklist k: <label>" lines the verbalizer reads."""
    config = config or RewardConfig()
    steps = "\n".join(f"{i}. {step}" for i, step in enumerate(trajectory, start=1)) or NO_TRAJECTORY
    return system_and_user(
        "reward_judge",
        {
            "task": task.strip(),
            "trajectory": steps,
            "observation": _observation(observation_text, config),
            "count": str(len(checklist)),
            "checklist": format_checklist(checklist),
            "progress": progress_text(checklist, progress),
            "thought": thought.strip() or "(none given)",
            "action": action_text.strip(),
        },
    )


def _label_of(matched: str) -> Label:
    """The label a matched answer line names ("Yes", "in-progress", "NO" ...)."""
    lowered = matched.lower()
    if lowered == "yes":
        return "yes"
    return "no" if lowered == "no" else "in_progress"


def _final_labels(text: str, n_items: int) -> dict[int, re.Match[str]] | None:
    """The last answer line for each item 1..n_items, or None if any item has none."""
    found: dict[int, re.Match[str]] = {}
    for match in _LABEL_LINE.finditer(text):
        number = int(match.group("num"))
        if 1 <= number <= n_items:
            found[number] = match
    if len(found) < n_items:
        return None
    return found


def _token_label(token: str) -> Label | None:
    """Which label a candidate first token starts: "Yes", " yes", "In", " In", "**No" ... or None."""
    word = re.match(r"[a-z]+", token.strip(_TOKEN_NOISE).lower())
    if word is None:
        return None
    return _FIRST_WORDS.get(word.group(0))


def _item_score(token: TokenLogprob) -> float | None:
    """Softmax over the label first-tokens among this position's alternatives; labels not listed count as 0."""
    candidates = {alt.token: alt.logprob for alt in token.top_logprobs}
    # The sampled token is a legitimate alternative even when the server lists no (or other) top tokens.
    candidates.setdefault(token.token, token.logprob)
    by_label: dict[Label, list[float]] = {"yes": [], "in_progress": [], "no": []}
    for text, logprob in candidates.items():
        label = _token_label(text)
        if label is not None and math.isfinite(logprob):
            # Spelling variants (" Yes", "Yes", "yes") are the same label: their probabilities add up.
            by_label[label].append(logprob)
    present = [lp for lps in by_label.values() for lp in lps]
    if not present:
        return None
    peak = max(present)
    mass = {label: sum(math.exp(lp - peak) for lp in lps) for label, lps in by_label.items()}
    total = sum(mass.values())
    return (mass["yes"] + 0.5 * mass["in_progress"]) / total


def verbalize(choice_logprobs: Sequence[TokenLogprob], n_items: int) -> list[float] | None:
    """Per-item soft scores P(Yes) + 0.5 P(In Progress), read where each item's label starts in the final lines.

    The position is found in the text rebuilt from the tokens, after the LAST "Checklist k:" at a line start, so a
    "Yes" or "No" inside the summary paragraph is never read (WebOperator's code made that mistake). None when some
    item has no such line or its position offers no label alternatives; the caller then samples instead.
    """
    if n_items < 1 or not choice_logprobs:
        return None
    starts: list[int] = []
    offset = 0
    for token in choice_logprobs:
        starts.append(offset)
        offset += len(token.token)
    text = "".join(token.token for token in choice_logprobs)
    lines = _final_labels(text, n_items)
    if lines is None:
        logger.debug("verbalizer: the answer lacks a label line for some of the %d items", n_items)
        return None
    scores: list[float] = []
    for number in range(1, n_items + 1):
        position = lines[number].start("label")
        index = bisect.bisect_right(starts, position) - 1
        token = choice_logprobs[index]
        if starts[index] + len(token.token) <= position:
            return None
        score = _item_score(token)
        if score is None:
            logger.debug("verbalizer: no label token among the alternatives for item %d (%r)", number, token.token)
            return None
        scores.append(score)
    return scores


def label_scores_from_text(text: str, n_items: int) -> list[float] | None:
    """Hard label scores (Yes 1, In Progress 0.5, No 0) from one answer's final lines; None if any item is missing."""
    if n_items < 1:
        return None
    lines = _final_labels(text, n_items)
    if lines is None:
        return None
    return [LABEL_SCORES[_label_of(lines[k].group("label"))] for k in range(1, n_items + 1)]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


async def score_action(
    model: ChatModel,
    config: RewardConfig,
    task: str,
    trajectory: Sequence[str],
    observation: str,
    checklist: Sequence[str],
    thought: str,
    action_text: str,
    progress: Sequence[float] = (),
) -> RewardScore:
    """Ask once with logprobs; if they are missing or unreadable, sample n_fallback answers and average the labels.
    `progress` is the item scores of the step that led to this page (none at the start)."""
    items = list(checklist) or [task.strip()]
    messages = build_judge_messages(task, trajectory, observation, items, thought, action_text, progress=progress,
                                    config=config)
    texts: list[str] = []
    try:
        first = await model.complete(
            messages,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            logprobs=True,
            top_logprobs=config.top_logprobs,
        )
    except LLMError as exc:
        # Some servers reject the logprobs parameters outright; sampling still works there.
        if exc.kind != "bad_request":
            raise
        logger.warning("reward model: the server refused a logprobs request (%s); sampling instead", exc)
    else:
        if first.choices:
            choice = first.choices[0]
            texts.append(choice.text)
            scores = verbalize(choice.logprobs, len(items)) if choice.logprobs else None
            if scores is not None:
                return RewardScore(_mean(scores), tuple(scores), "logprobs", _trimmed(texts, config))
            logger.info(
                "reward model: %s; sampling %d answers instead",
                "no label positions in the logprobs" if choice.logprobs else "the server sent no logprobs",
                config.n_fallback,
            )
    # The first answer is itself a sample at the same temperature, so it counts towards n_fallback.
    missing = config.n_fallback - len(texts)
    if missing > 0:
        more = await model.complete(messages, n=missing, temperature=config.temperature, max_tokens=config.max_tokens)
        texts.extend(more.texts)
    readable = [s for s in (label_scores_from_text(t, len(items)) for t in texts) if s is not None]
    if not readable:
        logger.warning("reward model: none of %d answers had a label for every item; reward 0.0", len(texts))
        return RewardScore(0.0, (), "unparseable", _trimmed(texts, config))
    item_scores = tuple(_mean([s[k] for s in readable]) for k in range(len(items)))
    return RewardScore(_mean(item_scores), item_scores, "sampling", _trimmed(texts, config))


def _trimmed(texts: Sequence[str], config: RewardConfig) -> tuple[str, ...]:
    return tuple(t.strip()[: config.keep_text_chars] for t in texts)
