"""What the scripted model was asked, kept so tests can assert on the prompts an agent sent."""

from __future__ import annotations

import threading

from pydantic import BaseModel, ConfigDict

from .engine import Prompt, PromptMessage


class RecordedMessage(BaseModel):
    model_config = ConfigDict(frozen=True)
    role: str
    content: str


class RecordedRequest(BaseModel):
    """One chat-completions request and how it was answered (`rule` is None for fallbacks and rejections)."""

    model_config = ConfigDict(frozen=True)
    seq: int
    model: str
    messages: list[RecordedMessage]
    n: int
    temperature: float | None
    top_p: float | None
    max_tokens: int | None
    stop: list[str]
    logprobs: bool
    top_logprobs: int | None
    stream: bool
    # Whether the request asked for usage in the stream's last chunk (`stream_options.include_usage`).
    stream_usage: bool = False
    status: int
    rule: str | None
    fallback: bool
    replies: list[str]

    @property
    def prompt(self) -> Prompt:
        """The messages as the reply engines read them."""
        return Prompt(tuple(PromptMessage(m.role, m.content) for m in self.messages))

    @property
    def prompt_text(self) -> str:
        return self.prompt.all_text

    @property
    def last_user(self) -> str:
        return self.prompt.last_user


class RequestLog:
    """Append-only and thread-safe: the server thread writes while the test thread reads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[RecordedRequest] = []

    def next_seq(self) -> int:
        with self._lock:
            return len(self._items)

    def add(self, request: RecordedRequest) -> None:
        with self._lock:
            self._items.append(request)

    def snapshot(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
