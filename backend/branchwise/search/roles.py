"""One model per role (policy, value, reward), each counting what it used so a run can report usage per role."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from ..chat_model import ChatModel, complete_fitting, fit_to_context, split_instructions
from ..core.budget import RunBudget
from ..core.mistakes import MistakeCounts, MistakeKind
from ..core.status import Role
from ..core.usage import Usage
from ..llm import ChatMessage, Completion, LLMConfig
from .waiting import ModelWait


class Completer(ChatModel, Protocol):
    """What LLMClient offers; the search depends on this, not on the class."""

    @property
    def config(self) -> LLMConfig: ...

    async def count_tokens(self, messages: Sequence[ChatMessage]) -> int: ...


# Prompts are cut to leave this share of the context unused: the chat template's own tokens are estimated.
CONTEXT_MARGIN = 0.05


@dataclass(frozen=True)
class ModelCall:
    """One answered call, as a role reports it: what was asked (the first line of the system message), how long the
    model worked on it (`Completion.seconds`), what it cost, the replies, and the messages as fitted to the model's
    context (a context-overflow reply may have had them shrunk once more)."""

    role: Role
    asked: str
    seconds: float
    usage: Usage
    replies: tuple[str, ...]
    at: datetime = field(default_factory=lambda: datetime.now(UTC))
    messages: tuple[ChatMessage, ...] = ()


# Told of every answered call (the run's trace, which stores it).
CallListener = Callable[[ModelCall], Awaitable[None]]


def prompt_text(messages: Sequence[ChatMessage]) -> str:
    """A prompt as one text, each message under its role: what `--keep-prompts` stores."""
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in messages)


def asked_of(messages: Sequence[ChatMessage]) -> str:
    """Which agent or judge a prompt is for: the first line of the instructions its last user turn ends with
    (WebPilot's agents share a system message), else of the system message."""
    user = next((m.content for m in reversed(messages) if m.role == "user"), "")
    _, named = split_instructions(user)
    if named is None:
        named = next((m.content for m in messages if m.role == "system"), "")
    return named.strip().split("\n", 1)[0][:160]


@dataclass
class RoleModel:
    """A client seen through one role: several roles may share a client, but each counts its own usage."""

    client: Completer
    role: Role
    usage: Usage = field(default_factory=Usage)
    # The run's limits, shared by its roles; None: unlimited.
    budget: RunBudget | None = None
    # What went wrong in this role's answers (core/mistakes.py), noted by the code that reads them.
    mistakes: Counter[MistakeKind] = field(default_factory=Counter)
    on_call: CallListener | None = None
    # Told of each call while it is under way, to say that the run waits on a slow model.
    wait: ModelWait | None = None

    def noted(self, kind: MistakeKind, count: int = 1) -> None:
        """One more mistake of `kind` in this role's answers (or `count` more)."""
        if count > 0:
            self.mistakes[kind] += count

    @property
    def config(self) -> LLMConfig:
        return self.client.config

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
        answer = self.config.max_tokens if max_tokens is None else max_tokens
        limit = int(self.config.context_tokens * (1 - CONTEXT_MARGIN)) - answer
        messages, tokens = await fit_to_context(messages, limit, self.client.count_tokens)
        budget = self.budget
        held = budget.reserve(n, n * (tokens + answer)) if budget is not None else None
        started = time.monotonic()
        waiting = self.wait.started(self.role, tokens) if self.wait is not None else None
        try:
            completion = await complete_fitting(
                self.client, messages, n=n, temperature=temperature, max_tokens=max_tokens, logprobs=logprobs,
                top_logprobs=top_logprobs, stop=stop, top_p=top_p,
            )
        except BaseException:
            if budget is not None and held is not None:
                budget.settle(held, None)
            raise
        finally:
            if self.wait is not None and waiting is not None:
                self.wait.ended(waiting)
        if budget is not None and held is not None:
            budget.settle(held, completion.usage)
        self.usage = self.usage + completion.usage
        if self.on_call is not None:
            # The model's own time where the client measured it: calls made at once queue for the server's slots,
            # and their waits would count the same seconds twice.
            seconds = completion.seconds or round(time.monotonic() - started, 3)
            await self.on_call(ModelCall(self.role, asked_of(messages), seconds, completion.usage,
                                         tuple(completion.texts), messages=tuple(messages)))
        return completion


@dataclass
class ModelRoles:
    policy: RoleModel
    value: RoleModel
    reward: RoleModel
    # None: the policy's client, counted apart (only mcts plans).
    planner: RoleModel | None = None

    def __post_init__(self) -> None:
        if self.planner is None:
            self.planner = RoleModel(self.policy.client, "planner", budget=self.policy.budget)

    @property
    def plans(self) -> RoleModel:
        assert self.planner is not None
        return self.planner

    def for_run(self, budget: RunBudget, before: Mapping[Role, Usage] | None = None,
                on_call: CallListener | None = None, wait: ModelWait | None = None) -> ModelRoles:
        """The same clients seen by one run: usage counted from zero (or from what a resumed run had used before),
        every call held to `budget`, reported to `on_call` and, while it is under way, to `wait`."""
        before = before or {}
        return ModelRoles(*(RoleModel(m.client, m.role, usage=before.get(m.role, Usage()), budget=budget,
                                      on_call=on_call, wait=wait)
                            for m in self.by_role().values()))

    def usage(self) -> dict[Role, Usage]:
        """What each role has used, the roles that have not been called left out."""
        return {role: model.usage for role, model in self.by_role().items() if model.usage != Usage()}

    @classmethod
    def shared(cls, client: Completer) -> ModelRoles:
        return cls(RoleModel(client, "policy"), RoleModel(client, "value"), RoleModel(client, "reward"),
                   RoleModel(client, "planner"))

    def by_role(self) -> dict[Role, RoleModel]:
        return {"policy": self.policy, "value": self.value, "reward": self.reward, "planner": self.plans}

    def mistakes(self) -> MistakeCounts:
        """Each role's mistakes by kind, the roles and kinds without any left out."""
        return {role: dict(model.mistakes) for role, model in self.by_role().items() if model.mistakes}

    def total(self) -> Usage:
        return self.policy.usage + self.value.usage + self.reward.usage + self.plans.usage
