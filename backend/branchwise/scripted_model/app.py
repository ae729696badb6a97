"""The FastAPI app speaking the OpenAI chat-completions protocol, answering from a ReplyEngine."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError

from ..hostcheck import LoopbackHostOnly
from .config import ServerConfig
from .engine import Prompt, PromptMessage, ReplyEngine, Selection
from .faults import FailureQueue
from .recording import RecordedMessage, RecordedRequest, RequestLog
from .script import Reply
from .simulate import resolve_placeholders
from .wire import (
    AssistantMessage,
    ChatCompletionChunk,
    ChatCompletionResponse,
    ChatRequest,
    ChunkChoice,
    Delta,
    ErrorBody,
    ErrorDetail,
    FinishReason,
    ModelCard,
    ModelList,
    TokenizeRequest,
    WireChoice,
    WireLogprobs,
    WirePromptDetails,
    WireTokenLogprob,
    WireTopLogprob,
    WireUsage,
    approx_tokens,
)

logger = logging.getLogger(__name__)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


@dataclass
class InFlight:
    """How many answers are being waited for right now, and the most there ever were at once (answers with a delay
    count while they wait): what tests of a client's concurrency limit read, instead of timing it."""

    now: int = 0
    peak: int = 0


@dataclass
class PromptCache:
    """The last prompt answered: a llama.cpp-like server has its start in its one slot's cache."""

    last: str = ""


@dataclass(frozen=True)
class ServerState:
    config: ServerConfig
    engine: ReplyEngine
    log: RequestLog
    faults: FailureQueue
    in_flight: InFlight = field(default_factory=InFlight)
    cache: PromptCache = field(default_factory=PromptCache)


@dataclass(frozen=True)
class _Answer:
    text: str
    finish_reason: FinishReason
    reply: Reply


def error_response(status: int, message: str, *, param: str | None = None, code: str | None = None) -> JSONResponse:
    error_type = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    body = ErrorBody(error=ErrorDetail(message=message, type=error_type, param=param, code=code))
    return JSONResponse(body.model_dump(), status_code=status)


def _finish(reply: Reply, request: ChatRequest) -> _Answer:
    """Apply the request's stop sequences and token limit the way a real model server would."""
    text = reply.text
    for stop in request.stop_list:
        if stop and stop in text:
            text = text[: text.index(stop)]
    limit = request.token_limit
    if limit is not None and approx_tokens(text) > limit:
        return _Answer(text=text[: limit * 4], finish_reason="length", reply=reply)
    return _Answer(text=text, finish_reason="stop", reply=reply)


def _logprobs(reply: Reply, request: ChatRequest) -> WireLogprobs | None:
    if not request.logprobs or reply.logprobs is None:
        return None
    keep = request.top_logprobs or 0
    return WireLogprobs(
        content=[
            WireTokenLogprob(
                token=t.token,
                logprob=t.logprob,
                top_logprobs=[WireTopLogprob(token=a.token, logprob=a.logprob) for a in t.top_logprobs[:keep]],
            )
            for t in reply.logprobs
        ]
    )


def _usage(prompt_tokens: int, answers: list[_Answer], cached: int | None = None) -> WireUsage:
    completion = sum(approx_tokens(a.text) for a in answers)
    return WireUsage(prompt_tokens=prompt_tokens, completion_tokens=completion, total_tokens=prompt_tokens + completion,
                     prompt_tokens_details=WirePromptDetails(cached_tokens=cached) if cached is not None else None)


def _cached_tokens(state: ServerState, text: str) -> int | None:
    """llama.cpp's prompt cache, roughly: the tokens of the start this prompt shares with the previous one."""
    if state.config.context_tokens is None:
        return None
    previous, state.cache.last = state.cache.last, text
    shared = len(os.path.commonprefix([previous, text]))
    return approx_tokens(text[:shared]) if shared else 0


def _record(
    state: ServerState, request: ChatRequest, status: int, selection: Selection | None, answers: list[_Answer]
) -> None:
    state.log.add(
        RecordedRequest(
            seq=state.log.next_seq(),
            model=request.model,
            messages=[RecordedMessage(role=m.role, content=m.text()) for m in request.messages],
            n=request.choice_count,
            temperature=request.temperature,
            top_p=request.top_p,
            max_tokens=request.token_limit,
            stop=request.stop_list,
            logprobs=bool(request.logprobs),
            top_logprobs=request.top_logprobs,
            stream=bool(request.stream),
            stream_usage=bool(request.stream_options and request.stream_options.include_usage),
            status=status,
            rule=selection.rule if selection else None,
            fallback=selection.fallback if selection else False,
            replies=[a.text for a in answers],
        )
    )


async def _sse(request: ChatRequest, answers: list[_Answer], model: str, completion_id: str,
               usage: WireUsage) -> AsyncIterator[str]:
    """Streams each choice as a role chunk, word-sized content chunks (the first with the logprobs, if asked for),
    spread over the reply's `stream_s`, and a finish chunk."""
    created = int(time.time())

    def chunk(choices: list[ChunkChoice], usage: WireUsage | None = None) -> str:
        payload = ChatCompletionChunk(id=completion_id, created=created, model=model, choices=choices, usage=usage)
        return f"data: {payload.model_dump_json(exclude_none=True)}\n\n"

    for index, answer in enumerate(answers):
        yield chunk([ChunkChoice(index=index, delta=Delta(role="assistant", content=""))])
        pieces = re.split(r"(?<= )", answer.text)
        for number, piece in enumerate(pieces):
            if answer.reply.stream_s:
                await asyncio.sleep(answer.reply.stream_s / len(pieces))
            logprobs = _logprobs(answer.reply, request) if number == 0 else None
            yield chunk([ChunkChoice(index=index, delta=Delta(content=piece), logprobs=logprobs)])
        yield chunk([ChunkChoice(index=index, delta=Delta(), finish_reason=answer.finish_reason)])
    if request.stream_options and request.stream_options.include_usage:
        yield chunk([], usage)
    yield "data: [DONE]\n\n"


def create_app(state: ServerState) -> FastAPI:
    app = FastAPI(title="Branchwise scripted model", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(LoopbackHostOnly)
    config = state.config

    @app.get("/v1/models")
    async def list_models() -> ModelList:
        return ModelList(data=[ModelCard(id=config.model_name)])

    if config.context_tokens is not None:
        @app.get("/props")
        async def props() -> dict[str, object]:
            return {"default_generation_settings": {"n_ctx": config.context_tokens}, "total_slots": config.slots}

        @app.post("/tokenize")
        async def tokenize(http_request: Request) -> Response:
            try:
                body = TokenizeRequest.model_validate_json(await http_request.body())
            except ValidationError as exc:
                return error_response(400, f"Malformed tokenize request: {exc}")
            return JSONResponse({"tokens": list(range(approx_tokens(body.content)))})

    @app.post("/v1/chat/completions")
    async def chat_completions(http_request: Request) -> Response:
        try:
            request = ChatRequest.model_validate_json(await http_request.body())
        except ValidationError as exc:
            logger.warning("scripted model: malformed request: %s", exc)
            return error_response(400, f"Malformed chat completion request: {exc}")

        if config.api_key is not None and http_request.headers.get("authorization") != f"Bearer {config.api_key}":
            _record(state, request, 401, None, [])
            return error_response(401, "Incorrect API key provided.", code="invalid_api_key")

        injected = state.faults.take()
        if injected is not None:
            _record(state, request, injected, None, [])
            return error_response(injected, f"Injected failure (HTTP {injected}) from the scripted model.")

        if request.choice_count < 1:
            _record(state, request, 400, None, [])
            return error_response(400, "n must be at least 1", param="n")
        if config.refuse_stream_options and request.stream_options is not None:
            _record(state, request, 400, None, [])
            return error_response(400, "1 validation error for ChatCompletionRequest\nstream_options\n  extra fields "
                                       "not permitted (type=value_error.extra)", param="stream_options")
        if config.refuse_n and request.choice_count > 1:
            _record(state, request, 400, None, [])
            return error_response(400, "Only one completion choice is allowed (n must be 1)", param="n")

        prompt_text = "\n".join(m.text() for m in request.messages)
        prompt_tokens = approx_tokens(prompt_text)
        if config.context_tokens is not None and prompt_tokens > config.context_tokens:
            _record(state, request, 400, None, [])
            return error_response(400, f"request ({prompt_tokens} tokens) exceeds the available context size "
                                       f"({config.context_tokens} tokens), try increasing it",
                                  code="exceed_context_size_error")

        prompt = Prompt(tuple(PromptMessage(m.role, m.text()) for m in request.messages))
        choices = 1 if config.ignore_n else request.choice_count
        selection = state.engine.select(prompt, choices)
        answers = [_finish(reply.model_copy(update={"text": resolve_placeholders(reply.text, prompt.last_user)}),
                           request)
                   for reply in selection.replies]
        _record(state, request, 200, selection, answers)
        cached = _cached_tokens(state, prompt_text)

        delay = max(reply.delay_s for reply in selection.replies)
        if delay > 0:
            state.in_flight.now += 1
            state.in_flight.peak = max(state.in_flight.peak, state.in_flight.now)
            try:
                await asyncio.sleep(delay)
            finally:
                state.in_flight.now -= 1

        completion_id = f"chatcmpl-{uuid.uuid4().hex[:16]}"
        model = request.model or config.model_name
        if request.stream:
            return StreamingResponse(_sse(request, answers, model, completion_id, _usage(prompt_tokens, answers,
                                                                                      cached)),
                                     media_type="text/event-stream")
        body = ChatCompletionResponse(
            id=completion_id,
            created=int(time.time()),
            model=model,
            choices=[
                WireChoice(
                    index=index,
                    message=AssistantMessage(content=answer.text),
                    finish_reason=answer.finish_reason,
                    logprobs=_logprobs(answer.reply, request),
                )
                for index, answer in enumerate(answers)
            ],
            usage=_usage(prompt_tokens, answers, cached),
        )
        return JSONResponse(body.model_dump(mode="json"))

    return app
