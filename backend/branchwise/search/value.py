"""The state value function of LM tree search (Koh et al.): how close is the page we reached to finishing the task?

The model reads the task, the actions so far, the current page and the proposed answer, and says whether the task
succeeded and, if not, whether the agent is on the right track. Success scores 1, on the right track 0.5, anything
else 0. One sample is noisy, so the value is the mean over many samples (self-consistency: 28.5 -> 37.0 % in the paper).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..chat_model import ChatModel, system_and_user
from ..core.tokens import CHARS_PER_TOKEN
from ..llm import ChatMessage
from ..policy.prompts import PromptConfig, newest_lines, truncate_observation

logger = logging.getLogger(__name__)

SUCCESS_VALUE = 1.0
ON_TRACK_VALUE = 0.5
FAILURE_VALUE = 0.0
NO_HISTORY = "(none yet: this is the starting page)"
NO_ANSWER = "(none: the agent has not finished)"

# Markdown decorations models put around "Status:" and its value: bold, headings, quotes, bullets.
_DECOR = r"[\s*_#>`\"'“”‘’-]*"
_STATUS = re.compile(rf"^{_DECOR}status{_DECOR}[:：=]{_DECOR}(success|successful|failure|failed|fail)\b", re.I | re.M)
_ON_TRACK = re.compile(
    rf"^{_DECOR}on\s+the\s+right\s+track(?:\s+to(?:wards?)?\s+success)?{_DECOR}[:：=]{_DECOR}(yes|no)\b", re.I | re.M
)


class ValueConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    # The paper averages 20 reasoning paths. They go out as ONE request with n=20 when the server supports n > 1;
    # LLMClient falls back to parallel single requests otherwise.
    n: int = Field(default=20, ge=1)
    # Ancestral sampling at T=1.0 and top_p 1.0, as in the paper (the policy's top_p is the client's setting).
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    # Enough for a short "Thoughts:" paragraph plus the two verdict lines.
    max_tokens: int = Field(default=512, ge=16)
    # LM tree search cut text observations at 3840 tokens.
    max_observation_tokens: int = Field(default=3840, ge=1)
    # The actions so far, oldest left out first beyond this.
    max_history_tokens: int = Field(default=400, ge=1)
    # How much of each raw answer a ValueScore keeps, for logs and the UI.
    keep_text_chars: int = Field(default=600, ge=0)


@dataclass(frozen=True)
class ValueScore:
    """The averaged value and what it was made of (None marks a sample whose verdict could not be read)."""

    value: float
    samples: tuple[float | None, ...]
    parsed: int
    texts: tuple[str, ...]


def _numbered(history: Sequence[str], max_chars: int) -> str:
    """Every action, numbered; within `max_chars` the oldest go first and a line says how many."""
    if not history:
        return NO_HISTORY
    return "\n".join(newest_lines([f"{i}. {action}" for i, action in enumerate(history, start=1)], max_chars))


def build_value_messages(
    task: str,
    observation_text: str,
    url: str,
    history: Sequence[str],
    answer: str | None,
    *,
    config: ValueConfig | None = None,
) -> list[ChatMessage]:
    """System instructions plus one user turn; `answer` is the stop answer when the last action ends the run."""
    config = config or ValueConfig()
    limit = PromptConfig(max_observation_tokens=config.max_observation_tokens)
    observation = truncate_observation(observation_text, limit)
    return system_and_user(
        "value",
        {
            "task": task.strip(),
            "history": _numbered(history, config.max_history_tokens * CHARS_PER_TOKEN),
            "answer": answer.strip() if answer is not None and answer.strip() else NO_ANSWER,
            "url": url,
            "observation": observation.rstrip(),
        },
    )


def parse_value(text: str) -> float | None:
    """1.0 for success, 0.5 for failure on the right track, 0.0 for failure; None without a readable status.

    The last status line wins, since the reasoning may quote the format before the verdict. A failure without an
    on-track line counts as not on track, as in the paper's code.
    """
    statuses = _STATUS.findall(text)
    if not statuses:
        return None
    if statuses[-1].lower().startswith("success"):
        return SUCCESS_VALUE
    on_track = _ON_TRACK.findall(text)
    if on_track and on_track[-1].lower() == "yes":
        return ON_TRACK_VALUE
    return FAILURE_VALUE


def aggregate_values(scores: Sequence[float | None]) -> float:
    """Mean over every sample, an unreadable verdict counting as failure (0), as in Koh et al.'s code.

    Dropping unreadable samples instead would let one "success" among nineteen unreadable answers score a state 1.0,
    which ends the search on noise.
    """
    if not scores:
        logger.warning("value function: no samples; scoring the state 0.0")
        return 0.0
    unreadable = sum(s is None for s in scores)
    if unreadable == len(scores):
        logger.warning("value function: none of %d samples had a readable verdict; scoring the state 0.0", len(scores))
    return sum(s for s in scores if s is not None) / len(scores)


async def score_state(
    model: ChatModel,
    config: ValueConfig,
    task: str,
    observation_text: str,
    url: str,
    history: Sequence[str],
    answer: str | None,
) -> ValueScore:
    """Sample the judge config.n times and average the verdicts."""
    messages = build_value_messages(task, observation_text, url, history, answer, config=config)
    completion = await model.complete(
        messages, n=config.n, temperature=config.temperature, max_tokens=config.max_tokens, top_p=config.top_p
    )
    texts = completion.texts
    if len(texts) != config.n:
        logger.info("value function: asked for %d samples, got %d", config.n, len(texts))
    samples = tuple(parse_value(t) for t in texts)
    parsed = sum(s is not None for s in samples)
    value = aggregate_values(samples)
    logger.debug("value function: %.3f from %d/%d readable samples at %s", value, parsed, len(samples), url)
    return ValueScore(
        value=value,
        samples=samples,
        parsed=parsed,
        texts=tuple(t.strip()[: config.keep_text_chars] for t in texts),
    )
