"""A small async client for any OpenAI-compatible chat-completions endpoint.

It adds what the agent needs on top of `openai.AsyncOpenAI`: sampling n choices even from servers that refuse n > 1,
logged retries with exponential backoff, a concurrency limit, usage accounting and errors a user can act on. Answers
are streamed, so the timeout measures silence: a slow CPU model that is still reading a long prompt (llama.cpp reports
its progress when asked) or still writing is not cut off, a server that has gone quiet is.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Literal

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from .core.tokens import CHARS_PER_TOKEN
from .core.usage import Usage
from .settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o"
# The openai client insists on a key; local servers (llama.cpp, vLLM) ignore whatever is sent.
_PLACEHOLDER_KEY = "not-needed"
# Where a server counts no tokens, they are estimated as characters / 4.
# The chat template's tokens around each message (role markers, separators), counted on top of its text.
MESSAGE_OVERHEAD_TOKENS = 4
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
# Servers phrase an n > 1 refusal differently (llama.cpp: "Only one completion choice is allowed").
_N_REFUSAL = re.compile(r"\bn\b|choice", re.IGNORECASE)


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True)
    role: Literal["system", "user", "assistant"]
    content: str

    def to_openai(self) -> ChatCompletionMessageParam:
        if self.role == "system":
            return {"role": "system", "content": self.content}
        if self.role == "user":
            return {"role": "user", "content": self.content}
        return {"role": "assistant", "content": self.content}


class LLMConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    base_url: str = DEFAULT_BASE_URL
    api_key: SecretStr = SecretStr("")
    model: str = DEFAULT_MODEL
    # Search samples diverse candidates (T=1.0, top_p=0.9 as in LM tree search); a greedy agent passes its own.
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    top_p: float = Field(default=0.9, gt=0.0, le=1.0)
    max_tokens: int = Field(default=384, ge=1)
    # The longest the server may send nothing (no progress, no token) before the call counts as timed out.
    timeout_s: float = Field(default=120.0, gt=0.0)
    max_retries: int = Field(default=3, ge=0)
    backoff_initial_s: float = Field(default=0.5, ge=0.0)
    backoff_max_s: float = Field(default=8.0, ge=0.0)
    max_concurrency: int = Field(default=4, ge=1)
    # The model's context in tokens: prompts are sized to fit it (the server's own figure where it says: endpoint.py).
    context_tokens: int = Field(default=8192, ge=512)
    # Ask for llama.cpp's prompt-processing progress while streaming (`return_progress`); other servers may refuse it.
    prompt_progress: bool = False
    # The server counts tokens for us at this address (llama.cpp's /tokenize); None: estimated from characters.
    tokenize_url: str | None = None
    # A new connection for every request (`Connection: close`). llama.cpp's server drops some reused keep-alive
    # connections without an answer ("Server disconnected without sending a response": 2 in 36 calls measured here,
    # none with fresh connections); on the same machine a connection costs nothing.
    fresh_connections: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> LLMConfig:
        """The endpoint, key and model the settings name; keyword overrides win."""
        values: dict[str, Any] = {
            "base_url": settings.base_url or DEFAULT_BASE_URL,
            "api_key": settings.api_key,
            "model": settings.model or DEFAULT_MODEL,
        }
        values.update(overrides)
        return cls.model_validate(values)


class TopLogprob(BaseModel):
    model_config = ConfigDict(frozen=True)
    token: str
    logprob: float


class TokenLogprob(BaseModel):
    model_config = ConfigDict(frozen=True)
    token: str
    logprob: float
    top_logprobs: list[TopLogprob] = []


class Choice(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str
    finish_reason: str | None = None
    logprobs: list[TokenLogprob] | None = None


class Completion(BaseModel):
    model_config = ConfigDict(frozen=True)
    model: str
    choices: list[Choice]
    usage: Usage
    # How long the model worked on it: its requests' time once sent (after the wait for a free slot), summed over the
    # requests a call was split into and the attempts it took; 0 when not measured.
    seconds: float = 0.0

    @property
    def texts(self) -> list[str]:
        return [c.text for c in self.choices]

    @property
    def text(self) -> str:
        return self.choices[0].text if self.choices else ""


ErrorKind = Literal["unreachable", "timeout", "auth", "not_found", "rate_limited", "server", "bad_request"]


class LLMError(Exception):
    """A model call failed for good; `str(error)` tells the user what to fix."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        status: int | None = None,
        server_message: str | None = None,
        server_param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.server_message = server_message
        self.server_param = server_param


@dataclass(frozen=True)
class _Sampling:
    n: int
    temperature: float
    top_p: float
    max_tokens: int
    logprobs: bool
    top_logprobs: int | None
    stop: tuple[str, ...]


def _server_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping) and isinstance(body.get("message"), str):
        return str(body["message"])
    return str(body) if body else exc.message


def _connection_cause(exc: openai.APIConnectionError) -> str:
    # The useful reason sits at the bottom of the httpx exception chain; the top only says "Connection error."
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    if any(isinstance(e, socket.gaierror) for e in chain):
        return "unknown host name"
    return str(chain[-1]).strip() or "connection error"


def _refuses_stream_options(exc: openai.APIError) -> bool:
    """A 400 naming `stream_options`: a server that refuses fields it does not know (vLLM before 0.4.3)."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code != 400:
        return False
    return exc.param == "stream_options" or "stream_options" in _server_detail(exc)


def _is_retryable(exc: openai.APIError) -> bool:
    if isinstance(exc, openai.APIConnectionError):
        return True
    return isinstance(exc, openai.APIStatusError) and (
        exc.status_code in _RETRYABLE_STATUSES or exc.status_code >= 500
    )


def _logprobs_of(logprobs: Any) -> list[TokenLogprob]:
    return [
        TokenLogprob(token=t.token, logprob=t.logprob,
                     top_logprobs=[TopLogprob(token=a.token, logprob=a.logprob) for a in t.top_logprobs or []])
        for t in (logprobs.content if logprobs is not None else None) or []
    ]


@dataclass
class _StreamedChoice:
    text: list[str]
    finish_reason: str | None = None
    logprobs: list[TokenLogprob] | None = None


class _StreamedAnswer:
    """The chunks of one streamed completion put back together: choices by index, and the usage the server reports
    in its last chunk (estimated from characters when it reports none)."""

    def __init__(self) -> None:
        self._choices: dict[int, _StreamedChoice] = {}
        self._usage: CompletionUsage | None = None
        self._model = ""

    def add(self, chunk: ChatCompletionChunk) -> None:
        self._model = chunk.model or self._model
        if chunk.usage is not None:
            self._usage = chunk.usage
        for part in chunk.choices:
            choice = self._choices.setdefault(part.index, _StreamedChoice([]))
            if part.delta is not None and part.delta.content:
                choice.text.append(part.delta.content)
            if part.logprobs is not None:
                choice.logprobs = (choice.logprobs or []) + _logprobs_of(part.logprobs)
            if part.finish_reason is not None:
                choice.finish_reason = part.finish_reason

    def completion(self, model: str, prompt_chars: int) -> Completion:
        choices = [Choice(text="".join(c.text), finish_reason=c.finish_reason, logprobs=c.logprobs)
                   for _, c in sorted(self._choices.items())]
        if self._usage is not None:
            details = self._usage.prompt_tokens_details
            usage = Usage(calls=1, prompt_tokens=self._usage.prompt_tokens,
                          completion_tokens=self._usage.completion_tokens,
                          cached_prompt_tokens=details.cached_tokens or 0 if details is not None else 0)
        else:
            usage = Usage(calls=1, prompt_tokens=prompt_chars // CHARS_PER_TOKEN,
                          completion_tokens=sum(len(c.text) for c in choices) // CHARS_PER_TOKEN)
        return Completion(model=self._model or model, choices=choices, usage=usage)


def _merge(parts: Sequence[Completion], model: str) -> Completion:
    usage = Usage()
    for part in parts:
        usage = usage + part.usage
    return Completion(model=model, choices=[c for part in parts for c in part.choices], usage=usage,
                      seconds=round(sum(part.seconds for part in parts), 3))


class LLMClient:
    """Create it inside the event loop that uses it; the HTTP pool and semaphore belong to that loop."""

    def __init__(self, config: LLMConfig) -> None:
        self._config = config
        self._openai = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key.get_secret_value() or _PLACEHOLDER_KEY,
            timeout=config.timeout_s,
            # Retries are ours (below) so they are logged, counted and testable.
            max_retries=0,
            default_headers={"Connection": "close"} if config.fresh_connections else None,
        )
        self._semaphore = asyncio.Semaphore(config.max_concurrency)
        self._usage = Usage()
        # None until the server shows whether it honours n > 1.
        self._n_supported: bool | None = None
        # Usage in the stream's last chunk is asked for until the server refuses the field (then counted from text).
        self._stream_usage = True
        self._tokenizer_works = True

    @property
    def config(self) -> LLMConfig:
        return self._config

    @property
    def usage(self) -> Usage:
        return self._usage

    @property
    def supports_n(self) -> bool | None:
        return self._n_supported

    async def aclose(self) -> None:
        await self._openai.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

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
        """Sample n choices. Raises LLMError when the model cannot be used."""
        if n < 1:
            raise ValueError("n must be at least 1")
        sampling = _Sampling(
            n=n,
            temperature=self._config.temperature if temperature is None else temperature,
            top_p=self._config.top_p if top_p is None else top_p,
            max_tokens=self._config.max_tokens if max_tokens is None else max_tokens,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            stop=tuple(stop or ()),
        )
        payload = [m.to_openai() for m in messages]
        if n == 1 or self._n_supported is False:
            return await self._fan_out(payload, sampling, n)
        try:
            completion = await self._call(payload, sampling)
        except LLMError as exc:
            if not self._is_n_refusal(exc):
                raise
            self._note_n_unsupported(f"it refused n={n}: {exc.server_message}")
            return await self._fan_out(payload, sampling, n)
        missing = n - len(completion.choices)
        if missing <= 0:
            self._n_supported = True
            return completion
        self._note_n_unsupported(f"it returned {len(completion.choices)} of {n} choices")
        extra = await self._fan_out(payload, sampling, missing)
        return _merge([completion, extra], completion.model)

    async def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        """The prompt's length in tokens: counted by the server where it offers it (`tokenize_url`), else estimated
        from characters. A server that answers without counting is not asked again; one that could not be reached
        is asked again next time."""
        text = "\n".join(m.content for m in messages)
        overhead = MESSAGE_OVERHEAD_TOKENS * len(messages)
        url = self._config.tokenize_url
        if url and self._tokenizer_works:
            answer = await self._tokenize(url, text)
            tokens = answer.get("tokens") if isinstance(answer, Mapping) else None
            if isinstance(tokens, list):
                return len(tokens) + overhead
            unreached = isinstance(answer, openai.APIConnectionError)
            logger.warning("the model server did not count tokens at %s (%s); estimating them from characters%s",
                           url, answer if isinstance(answer, Exception) else "no token list",
                           " this time" if unreached else "")
            self._tokenizer_works = unreached
        return len(text) // CHARS_PER_TOKEN + overhead

    async def _tokenize(self, url: str, text: str) -> object:
        """The server's answer to a tokenize request, or the error. A dropped connection is tried once more: an idle
        pooled connection the server closed just as it was reused (llama.cpp's keep-alive) fails that way."""
        try:
            return await self._openai.post(url, body={"content": text}, cast_to=object)
        except openai.APIConnectionError:
            pass  # tried again below, on a new connection
        except openai.APIError as exc:
            return exc
        try:
            return await self._openai.post(url, body={"content": text}, cast_to=object)
        except openai.APIError as exc:
            return exc

    def _is_n_refusal(self, exc: LLMError) -> bool:
        if exc.status != 400:
            return False
        return exc.server_param == "n" or bool(_N_REFUSAL.search(exc.server_message or ""))

    def _note_n_unsupported(self, reason: str) -> None:
        logger.info(
            "model server at %s does not sample n > 1 (%s); sending parallel requests", self._config.base_url, reason
        )
        self._n_supported = False

    async def _fan_out(self, payload: list[ChatCompletionMessageParam], sampling: _Sampling, count: int) -> Completion:
        single = replace(sampling, n=1)
        if count == 1:
            return await self._call(payload, single)
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._call(payload, single)) for _ in range(count)]
        except ExceptionGroup as failed:
            # Callers handle LLMError, not task-group plumbing; the first failure says what went wrong.
            first = next((e for e in failed.exceptions if isinstance(e, LLMError)), None)
            if first is None:
                raise
            raise first from None
        parts = [t.result() for t in tasks]
        return _merge(parts, parts[0].model)

    async def _call(self, payload: list[ChatCompletionMessageParam], sampling: _Sampling) -> Completion:
        """One logical request: retried on transient failures, accounted in usage when it succeeds."""
        attempt = 0
        # Time in requests sent, failed attempts included; the waits for a free slot and between retries are not.
        spent = 0.0
        while True:
            try:
                async with self._semaphore:
                    sent = time.monotonic()
                    try:
                        completion = await self._request(payload, sampling)
                    finally:
                        spent += time.monotonic() - sent
            except openai.APIError as exc:
                if self._stream_usage and _refuses_stream_options(exc):
                    logger.info("model server at %s does not take stream_options (%s); tokens are counted from the "
                                "text instead", self._config.base_url, _describe(exc))
                    self._stream_usage = False
                    continue
                if not _is_retryable(exc) or attempt >= self._config.max_retries:
                    raise self._to_llm_error(exc, attempt + 1) from exc
                delay = self._backoff(attempt)
                attempt += 1
                logger.warning(
                    "model call to %s failed (%s); retry %d/%d in %.2fs",
                    self._config.base_url,
                    _describe(exc),
                    attempt,
                    self._config.max_retries,
                    delay,
                )
                self._usage = self._usage + Usage(retries=1)
                await asyncio.sleep(delay)
                continue
            self._usage = self._usage + completion.usage
            return completion.model_copy(update={"seconds": round(spent, 3)})

    async def _request(self, payload: list[ChatCompletionMessageParam], sampling: _Sampling) -> Completion:
        omit = openai.omit
        stream = await self._openai.chat.completions.create(
            model=self._config.model,
            messages=payload,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            n=sampling.n if sampling.n > 1 else omit,
            logprobs=True if sampling.logprobs else omit,
            top_logprobs=sampling.top_logprobs if sampling.logprobs and sampling.top_logprobs is not None else omit,
            stop=list(sampling.stop) if sampling.stop else omit,
            stream=True,
            stream_options={"include_usage": True} if self._stream_usage else omit,
            extra_body={"return_progress": True} if self._config.prompt_progress else None,
        )
        answer = _StreamedAnswer()
        async with stream:
            async for chunk in stream:
                answer.add(chunk)
        return answer.completion(self._config.model, sum(len(str(m.get("content") or "")) for m in payload))

    def _backoff(self, attempt: int) -> float:
        # Jitter spreads out the parallel samples of a search step that all hit the same rate limit.
        base = min(self._config.backoff_max_s, self._config.backoff_initial_s * 2**attempt)
        return float(base * random.uniform(0.5, 1.0))

    def _to_llm_error(self, exc: openai.APIError, attempts: int) -> LLMError:
        where = self._config.base_url
        tried = f" (tried {attempts} times)" if attempts > 1 else ""
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(
                f"The model at {where} sent nothing for {self._config.timeout_s:g}s{tried}. "
                "Check that the server is not overloaded, or raise the timeout.",
                kind="timeout",
            )
        if isinstance(exc, openai.APIConnectionError):
            return LLMError(
                f"Cannot reach the model at {where}: {_connection_cause(exc)}{tried}. Set OPENAI_BASE_URL to a "
                "running OpenAI-compatible server (for example http://127.0.0.1:8080/v1).",
                kind="unreachable",
            )
        if not isinstance(exc, openai.APIStatusError):
            return LLMError(f"The model at {where} sent an unusable answer: {exc.message}", kind="server")
        status, detail = exc.status_code, _server_detail(exc)
        common: dict[str, Any] = {"status": status, "server_message": detail, "server_param": exc.param}
        if status in (401, 403):
            return LLMError(
                f"The model server at {where} rejected the API key (HTTP {status}: {detail}). "
                "Set OPENAI_API_KEY to a key it accepts.",
                kind="auth",
                **common,
            )
        if status == 404:
            return LLMError(
                f"The model server at {where} has no model '{self._config.model}' or no chat-completions endpoint "
                f"(HTTP 404: {detail}). Set BRANCHWISE_MODEL to a model it serves and check that OPENAI_BASE_URL "
                "ends in /v1.",
                kind="not_found",
                **common,
            )
        if status == 429:
            return LLMError(
                f"The model server at {where} is rate limiting requests (HTTP 429: {detail}){tried}. "
                "Wait and try again, or lower the concurrency.",
                kind="rate_limited",
                **common,
            )
        if status >= 500 or status in _RETRYABLE_STATUSES:
            return LLMError(
                f"The model server at {where} failed with HTTP {status}{tried}: {detail}", kind="server", **common
            )
        return LLMError(
            f"The model server at {where} rejected the request (HTTP {status}): {detail}", kind="bad_request", **common
        )


def _describe(exc: openai.APIError) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    return _connection_cause(exc) if isinstance(exc, openai.APIConnectionError) else type(exc).__name__
