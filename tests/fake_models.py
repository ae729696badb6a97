"""One in-process chat model for the search tests: it records every call and answers from a script.

It satisfies `ChatModel` (value, reward, rephrase) and `roles.Completer` (it has a `.config`), so it can also sit
behind a `RoleModel`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from branchwise.core.tokens import CHARS_PER_TOKEN
from branchwise.core.usage import Usage
from branchwise.llm import MESSAGE_OVERHEAD_TOKENS, ChatMessage, Choice, Completion, LLMConfig

# A reply is the text of every choice, texts cycled to fill the n choices, a whole Completion, or an error to raise.
Reply = str | Sequence[str] | Completion | Exception


@dataclass(frozen=True)
class Call:
    """The arguments of one `complete` call."""

    messages: list[ChatMessage]
    n: int
    temperature: float | None
    max_tokens: int | None
    logprobs: bool
    top_logprobs: int | None
    stop: Sequence[str] | None
    top_p: float | None = None

    @property
    def last(self) -> str:
        """The content of the last message, which is what the model is asked right now."""
        return self.messages[-1].content


Responder = Callable[[Call], Reply]


class FakeModel:
    """Answers each call with `respond(call)`; every completion reports `usage`."""

    def __init__(self, respond: Responder, *, usage: Usage | None = None, config: LLMConfig | None = None) -> None:
        self.respond = respond
        self.usage = usage or Usage(calls=1)
        self.config = config or LLMConfig(model="fake")
        self.calls: list[Call] = []

    @classmethod
    def always(cls, *texts: str, usage: Usage | None = None) -> FakeModel:
        """Every call gets `texts`, cycled to fill the n choices."""
        return cls(lambda call: texts, usage=usage)

    @classmethod
    def queue(cls, *replies: Reply, usage: Usage | None = None) -> FakeModel:
        """Each call takes the next reply; a call after the last one fails the test."""
        pending = list(replies)

        def respond(call: Call) -> Reply:
            assert pending, f"FakeModel has no reply left for call {len(model.calls)}: {call.last[:200]!r}"
            return pending.pop(0)

        model = cls(respond, usage=usage)
        return model

    async def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return sum(len(m.content) // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS for m in messages)

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
    ) -> Completion:
        call = Call(list(messages), n, temperature, max_tokens, logprobs, top_logprobs, stop, top_p)
        self.calls.append(call)
        reply = self.respond(call)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, Completion):
            return reply
        texts = [reply] if isinstance(reply, str) else list(reply)
        choices = [Choice(text=texts[i % len(texts)]) for i in range(n)]
        return Completion(model=self.config.model, choices=choices, usage=self.usage)
