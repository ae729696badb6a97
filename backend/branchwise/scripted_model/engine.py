"""Chooses replies for a prompt. The server asks a ReplyEngine; ScriptEngine answers from a Script: the first
matching rule with uses left, else the script's fallback."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Protocol

from .script import Reply, Script

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Selection:
    rule: str | None
    replies: tuple[Reply, ...]

    @property
    def fallback(self) -> bool:
        return self.rule is None


@dataclass(frozen=True)
class PromptMessage:
    role: str
    text: str


@dataclass(frozen=True)
class Prompt:
    """The messages of one chat-completions request, as text."""

    messages: tuple[PromptMessage, ...]

    @property
    def all_text(self) -> str:
        return "\n".join(m.text for m in self.messages)

    @property
    def last_user(self) -> str:
        return next((m.text for m in reversed(self.messages) if m.role == "user"), "")


class ReplyEngine(Protocol):
    """What answers the server's requests: a script, or a simulated model."""

    def select(self, prompt: Prompt, n: int) -> Selection: ...

    def uses(self) -> dict[str, int]: ...

    def reset(self) -> None: ...


class ScriptEngine:
    def __init__(self, script: Script) -> None:
        self._script = script
        self._lock = threading.Lock()
        self._uses = [0] * len(script.rules)
        self._cursor = [0] * len(script.rules)

    @property
    def script(self) -> Script:
        return self._script

    def select(self, prompt: Prompt, n: int) -> Selection:
        """One use of a rule per request; its replies cycle across the n choices and across requests."""
        all_text, last_user_text = prompt.all_text, prompt.last_user
        with self._lock:
            for index, rule in enumerate(self._script.rules):
                if rule.max_uses is not None and self._uses[index] >= rule.max_uses:
                    continue
                if not rule.matches(all_text, last_user_text):
                    continue
                self._uses[index] += 1
                start = self._cursor[index]
                self._cursor[index] = start + n
                picked = tuple(rule.replies[(start + i) % len(rule.replies)] for i in range(n))
                return Selection(rule=self._script.rule_label(index), replies=picked)
        logger.warning("scripted model: no rule matches the prompt; sending the fallback reply")
        return Selection(rule=None, replies=(Reply(text=self._script.fallback),) * n)

    def uses(self) -> dict[str, int]:
        with self._lock:
            return {self._script.rule_label(i): count for i, count in enumerate(self._uses)}

    def reset(self) -> None:
        with self._lock:
            self._uses = [0] * len(self._script.rules)
            self._cursor = [0] * len(self._script.rules)
