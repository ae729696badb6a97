"""What the model-facing modules (value function, reward model, rephraser) need from a model, and their prompt texts.

They depend on the `ChatModel` protocol rather than on `LLMClient`, so tests can pass a tiny in-process fake and the
search can wrap a client (budgets, caching) without subclassing it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Protocol

from .llm import ChatMessage, Completion

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class ChatModel(Protocol):
    """The signature of `LLMClient.complete`; `LLMClient` satisfies it structurally."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int = 1,
        temperature: float | None = None,
        max_tokens: int | None = None,
        logprobs: bool = False,
        top_logprobs: int | None = None,
        stop: Sequence[str] | None = None,
        top_p: float | None = None,
    ) -> Completion: ...


@functools.cache
def load_prompt(name: str) -> str:
    """A prompt text shipped in the package (branchwise/prompts/<name>), read once."""
    return (resources.files("branchwise") / "prompts" / name).read_text(encoding="utf-8")


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """Substitute {name} placeholders in one pass, so braces inside page text or tasks are never re-expanded.

    Unknown placeholders are an error: a typo in a prompt file would otherwise reach the model silently.
    """

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"prompt placeholder {{{key}}} has no value")
        return values[key]

    return _PLACEHOLDER.sub(substitute, template)
