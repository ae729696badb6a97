"""What the model-facing modules (value function, reward model, rephraser) need from a model, and their prompt texts.

They depend on the `ChatModel` protocol rather than on `LLMClient`, so tests can pass a tiny in-process fake and the
search can wrap a client (budgets, caching) without subclassing it.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib import resources
from typing import Any, Protocol

from .llm import ChatMessage, Completion, LLMError

log = logging.getLogger(__name__)

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


def system_and_user(name: str, values: Mapping[str, str]) -> list[ChatMessage]:
    """The shipped prompt `name`: its system message (`<name>_system.txt`) and its user turn (`<name>_user.txt` with
    `values` filled in)."""
    return [ChatMessage(role="system", content=load_prompt(f"{name}_system.txt").strip()),
            ChatMessage(role="user", content=fill_template(load_prompt(f"{name}_user.txt"), values).strip())]


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


# A prompt's user turn may end with its instructions after a line of three dashes (WebPilot's agents put the page first,
# so that a prompt cache keeps it, and their own part after it): that part is never cut when the prompt is shrunk, and
# its first line names the prompt (`split_instructions`).
INSTRUCTIONS_MARK = "\n---\n"


def split_instructions(text: str) -> tuple[str, str | None]:
    """A text's body and the instructions it ends with after INSTRUCTIONS_MARK (None: it ends with none). What fills a
    prompt before the mark (a page) or in it (a model's earlier reply) is kept to lines that cannot be the mark."""
    body, mark, instructions = text.rpartition(INSTRUCTIONS_MARK)
    return (body, instructions) if mark else (text, None)


# What a shrunk prompt says where text was cut out.
SHRUNK_MARKER = "[... part of this text was cut to fit the model's context ...]"
# How often a prompt the server refused (HTTP 400, e.g. over its context) is halved and sent again.
MAX_SHRINKS = 3


def shrink_messages(messages: Sequence[ChatMessage], keep: float = 0.5) -> list[ChatMessage] | None:
    """The messages with the longest one cut to about `keep` of its length (its head and its tail kept, whole lines
    where it can, and instructions after INSTRUCTIONS_MARK whole), or None when nothing is left to cut. The page
    observation is what makes prompts long, and both ends of every prompt matter: the instructions before it, the task
    and the answer format after it."""
    if not messages:
        return None
    index = max(range(len(messages)), key=lambda i: len(messages[i].content))
    text = messages[index].content
    body, instructions = split_instructions(text)
    ending = "" if instructions is None else INSTRUCTIONS_MARK + instructions
    if len(body) < 4 * len(SHRUNK_MARKER):
        return None
    kept = max(0, int(len(text) * min(max(keep, 0.0), 1.0)) - len(ending))
    head, tail = body[: kept * 2 // 3], body[len(body) - kept // 3:]
    head = head[: head.rfind("\n")] if head.rfind("\n") > len(head) // 2 else head
    tail = tail[tail.find("\n") + 1:] if 0 <= tail.find("\n") < len(tail) // 2 else tail
    shrunk = list(messages)
    shrunk[index] = ChatMessage(role=messages[index].role, content=f"{head}\n{SHRUNK_MARKER}\n{tail}{ending}")
    return shrunk


async def fit_to_context(messages: Sequence[ChatMessage], limit: int,
                         count: Callable[[Sequence[ChatMessage]], Awaitable[int]]) -> tuple[list[ChatMessage], int]:
    """The messages cut, longest first, until `count` finds them at most `limit` tokens long, and their count. The
    cut is sized from the measured characters per token, so one or two counts usually do; what is still too long
    after MAX_SHRINKS cuts is sent as it is (complete_fitting then shrinks on the server's refusal)."""
    current = list(messages)
    tokens = await count(current)
    for _ in range(MAX_SHRINKS):
        if tokens <= limit:
            break
        longest = max(len(m.content) for m in current)
        chars_per_token = sum(len(m.content) for m in current) / max(1, tokens)
        excess = (tokens - limit) * chars_per_token * 1.1 + len(SHRUNK_MARKER)
        smaller = shrink_messages(current, keep=max(0.1, 1 - excess / max(1, longest)))
        if smaller is None:
            break
        log.info("a %d-token prompt is over the model's %d; cutting its longest message", tokens, limit)
        current = smaller
        tokens = await count(current)
    return current, tokens


async def complete_fitting(model: ChatModel, messages: Sequence[ChatMessage], **sampling: Any) -> Completion:
    """`model.complete`, but a request the server rejects as bad (HTTP 400: a prompt over its context, most often)
    is shrunk and sent again, up to MAX_SHRINKS times, instead of ending the run; then the last error stands."""
    current = list(messages)
    for attempt in range(MAX_SHRINKS + 1):
        try:
            return await model.complete(current, **sampling)
        except LLMError as exc:
            smaller = shrink_messages(current) if exc.kind == "bad_request" and attempt < MAX_SHRINKS else None
            if smaller is None:
                raise
            log.warning("the model server rejected a %d-character prompt (%s); retrying with the longest message "
                        "cut in half", sum(len(m.content) for m in current), exc.server_message or exc)
            current = smaller
    raise AssertionError("unreachable: the last attempt returns or raises")
