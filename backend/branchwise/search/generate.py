"""Candidate actions for one node: several prompt variations, each validated before it counts (WebOperator).

Each variation is one generator: the WebArena chain-of-thought prompt with its own history window, and optionally the
rephrased task. An answer that does not parse or fails validation is sent back with the reason, up to `max_retries`
times, so the model can correct itself instead of wasting a branch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..actions import Action, ActionParseError, Goto, NewTab, Stop, parse_response
from ..llm import ChatMessage
from ..observation import PageView
from ..policy.prompts import PromptConfig, build_cot_messages, newest_lines
from ..safety.secrets import SecretKeeper
from .candidates import Candidate
from .examples import fit_examples
from .meant import proposed
from .roles import RoleModel
from .urlcheck import UrlCheck
from .validate import ActionSpace, Refusal, validate_action

log = logging.getLogger(__name__)


class Variation(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    history: int = Field(ge=0)
    rephrased: bool = False
    examples: bool = False


# WebOperator's three generators: history lengths 5, 3 (with the rephrased task) and 4 (with retrieved past examples,
# when the run store has any).
DEFAULT_VARIATIONS = (
    Variation(name="history-5", history=5),
    Variation(name="rephrased", history=3, rephrased=True),
    Variation(name="history-4", history=4, examples=True),
)


class GenerationConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    variations: tuple[Variation, ...] = DEFAULT_VARIATIONS
    max_retries: int = Field(default=5, ge=1)
    # WebOperator samples its generators at 0.7.
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    prompt: PromptConfig = PromptConfig()


@dataclass(frozen=True)
class HistoryEntry:
    """One executed step as later prompts show it: a short summary of what was seen, then what was done."""

    summary: str
    action: str


@dataclass(frozen=True)
class GenerationInput:
    task: str
    observation: str
    url: str
    history: Sequence[HistoryEntry]
    rephrased_block: str = ""
    examples_block: str = ""
    space: ActionSpace = ActionSpace()
    # What the state does not allow, told to every variation (`validate.unavailable_actions`).
    unavailable: tuple[str, ...] = ()


@dataclass(frozen=True)
class GenerationFailure:
    variation: str
    errors: tuple[str, ...]


def history_text(history: Sequence[HistoryEntry], window: int, max_chars: int | None = None) -> str | None:
    """The last `window` actions, numbered, each with what its page showed; within `max_chars`, the oldest go first
    (the newest always stays, cut if it alone is too long) and a line says how many are left out."""
    recent = list(history)[-window:] if window else []
    if not recent:
        return None
    first = len(history) - len(recent) + 1
    lines = [f"{first + i}. {entry.action}" + (f" (seen: {entry.summary})" if entry.summary else "")
             for i, entry in enumerate(recent)]
    if max_chars is not None:
        lines = newest_lines(lines, max_chars)
    return "\n" + "\n".join(lines)


def variation_messages(data: GenerationInput, variation: Variation, config: GenerationConfig) -> list[ChatMessage]:
    prompt = config.prompt
    objective = data.task
    if variation.rephrased and data.rephrased_block:
        objective = f"{objective}\n{data.rephrased_block}"
    if variation.examples and data.examples_block:
        block = fit_examples(data.examples_block, prompt.examples_chars)
        objective = f"{objective}\n{block}" if block else objective
    history = history_text(data.history, variation.history, prompt.history_chars)
    return build_cot_messages(objective, data.observation, data.url, history, config=prompt,
                              unavailable=data.unavailable)


async def _check(action: Action, page: PageView | None, space: ActionSpace,
                 url_check: UrlCheck | None) -> Refusal | None:
    refusal = validate_action(action, page, space)
    if refusal is None and url_check is not None and isinstance(action, Goto | NewTab) and action.url:
        unreachable = await url_check.check(action.url)
        refusal = None if unreachable is None else Refusal("invalid_action", unreachable)
    return refusal


async def _generate_one(
    model: RoleModel, data: GenerationInput, variation: Variation, config: GenerationConfig, page: PageView | None,
    url_check: UrlCheck | None, secrets: SecretKeeper,
) -> Candidate | GenerationFailure:
    messages = variation_messages(data, variation, config)
    errors: list[str] = []
    space = data.space
    for _ in range(config.max_retries):
        completion = await model.complete(messages, temperature=config.temperature)
        text = completion.text
        try:
            parsed = parse_response(text)
        except ActionParseError as exc:
            model.noted("unparseable")
            error = f"your answer has no valid action: {exc}"
        else:
            # A typed password or card number is masked in the candidate's text and thought from here on.
            action, thought = proposed(parsed, page, secrets, model)
            problem = await _check(action, page, space, url_check)
            if problem is None:
                return Candidate(action, action.to_text(), thought, sources=(variation.name,))
            model.noted(problem.kind)
            if isinstance(action, Stop):
                # A number no page showed, given again after being told so, is taken: the model may have counted it.
                space = space.with_seen(action.answer)
            error = f"`{action.to_text()}` cannot be done: {problem}"
        errors.append(error)
        messages = [*messages, ChatMessage(role="assistant", content=secrets.scrub(text)),
                    ChatMessage(role="user", content=f"{error}. Give one valid action in the same format.")]
    log.info("generator %s gave no valid action after %d tries: %s", variation.name, config.max_retries,
             secrets.scrub(errors[-1]))
    return GenerationFailure(variation.name, tuple(errors))


async def generate_candidates(
    model: RoleModel, data: GenerationInput, config: GenerationConfig, page: PageView | None,
    url_check: UrlCheck | None = None, secrets: SecretKeeper | None = None,
) -> tuple[list[Candidate], list[GenerationFailure]]:
    """One validated candidate per variation (at most), generated concurrently. `secrets`: the run's SecretKeeper
    (a fresh one still masks what each answer types, without the run's memory)."""
    keeper = secrets or SecretKeeper()
    config = config.model_copy(update={"prompt": config.prompt.fitted(model.config)})
    results = await asyncio.gather(*(_generate_one(model, data, v, config, page, url_check, keeper)
                                     for v in config.variations))
    candidates = [r for r in results if isinstance(r, Candidate)]
    failures = [GenerationFailure(r.variation, tuple(keeper.scrub(e) for e in r.errors))
                for r in results if isinstance(r, GenerationFailure)]
    return candidates, failures
