"""LLMClient against the scripted model over real HTTP: n sampling, retries, errors and usage accounting."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from branchwise.core.usage import Usage
from branchwise.llm import ChatMessage, Completion, LLMClient, LLMConfig, LLMError
from branchwise.scripted_model import Script, ScriptedModelServer, ServerConfig
from branchwise.settings import Settings

MESSAGES = [ChatMessage(role="system", content="You act."), ChatMessage(role="user", content="OBJECTIVE: test")]

SCRIPT = Script.model_validate(
    {
        "rules": [
            {"name": "slow", "when_contains": ["SLOW"], "reply": {"text": "late", "delay_s": 0.6}},
            {"name": "nap", "when_contains": ["NAP"], "reply": {"text": "z", "delay_s": 0.2}},
            {"name": "talker", "when_contains": ["TALK"],
             "reply": {"text": "one two three four five six seven eight", "stream_s": 1.2}},
            {
                "name": "lp",
                "when_contains": ["LOGPROBS"],
                "reply": {
                    "text": "yes",
                    "logprobs": [
                        {"token": "yes", "logprob": -0.2, "top_logprobs": [{"token": "yes", "logprob": -0.2}]}
                    ],
                },
            },
            {"name": "objective", "when_contains": ["OBJECTIVE"], "replies": ["a", "b", "c", "d", "e"]},
        ]
    }
)


def config_for(server: ScriptedModelServer, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {"base_url": server.base_url, "api_key": "x", "model": "m", "backoff_initial_s": 0.01}
    values.update(overrides)
    return LLMConfig(**values)


def complete(config: LLMConfig, messages: list[ChatMessage] = MESSAGES, **kwargs: Any) -> tuple[Completion, LLMClient]:
    async def run() -> tuple[Completion, LLMClient]:
        async with LLMClient(config) as client:
            return await client.complete(messages, **kwargs), client

    return asyncio.run(run())


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_complete_sends_configured_sampling_parameters() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        completion, _ = complete(config_for(server), stop=["\n\n"])
        assert completion.text == "a" and completion.texts == ["a"]
        sent = server.last_request
        assert (sent.model, sent.temperature, sent.top_p, sent.max_tokens) == ("m", 1.0, 0.9, 384)
        assert sent.stop == ["\n\n"] and sent.n == 1
        assert [(m.role, m.content) for m in sent.messages] == [(m.role, m.content) for m in MESSAGES]

        complete(config_for(server), temperature=0.0, max_tokens=64)
        assert (server.last_request.temperature, server.last_request.max_tokens) == (0.0, 64)


def test_n_is_sent_once_when_the_server_supports_it() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        completion, client = complete(config_for(server), n=3)
        assert completion.texts == ["a", "b", "c"]
        assert [r.n for r in server.requests()] == [3]
        assert client.supports_n is True
        assert completion.usage.calls == 1


def test_refused_n_falls_back_to_parallel_requests_and_is_remembered() -> None:
    async def run(server: ScriptedModelServer) -> tuple[Completion, Completion, LLMClient]:
        async with LLMClient(config_for(server)) as client:
            first = await client.complete(MESSAGES, n=3)
            second = await client.complete(MESSAGES, n=2)
            return first, second, client

    with ScriptedModelServer(SCRIPT, ServerConfig(refuse_n=True)) as server:
        first, second, client = asyncio.run(run(server))
        assert sorted(first.texts) == ["a", "b", "c"]
        assert len(second.texts) == 2
        assert client.supports_n is False
        requests = server.requests()
        # One refused n=3 attempt, then only single-choice requests: 3 for the first call, 2 for the second.
        assert [(r.n, r.status) for r in requests] == [(3, 400)] + [(1, 200)] * 5
        assert first.usage.calls == 3 and second.usage.calls == 2


def test_a_server_that_refuses_stream_options_is_asked_without_them_from_then_on() -> None:
    async def run(server: ScriptedModelServer) -> tuple[Completion, Completion, LLMClient]:
        async with LLMClient(config_for(server)) as client:
            return await client.complete(MESSAGES), await client.complete(MESSAGES), client

    with ScriptedModelServer(SCRIPT, ServerConfig(refuse_stream_options=True)) as server:
        first, second, client = asyncio.run(run(server))
        assert first.text == "a" and second.text
        # One refused request, then none asks for the field again; the refusal is no retry, and tokens are still
        # counted (from the text).
        assert [(r.stream_usage, r.status) for r in server.requests()] == [(True, 400), (False, 200), (False, 200)]
        assert (client.usage.calls, client.usage.retries) == (2, 0)
        assert first.usage.prompt_tokens > 0


def test_too_few_choices_are_topped_up_with_parallel_requests() -> None:
    with ScriptedModelServer(SCRIPT, ServerConfig(ignore_n=True)) as server:
        completion, client = complete(config_for(server), n=3)
        assert sorted(completion.texts) == ["a", "b", "c"]
        assert [r.n for r in server.requests()] == [3, 1, 1]
        assert client.supports_n is False


def test_transient_failures_are_retried_then_succeed() -> None:
    with ScriptedModelServer(SCRIPT, ServerConfig(fail_statuses=[429, 500, 503])) as server:
        completion, client = complete(config_for(server))
        assert completion.text == "a"
        assert [r.status for r in server.requests()] == [429, 500, 503, 200]
        assert (client.usage.calls, client.usage.retries) == (1, 3)


def test_retries_give_up_after_max_retries_with_a_clear_error() -> None:
    with ScriptedModelServer(SCRIPT, ServerConfig(fail_statuses=[500] * 3)) as server:
        with pytest.raises(LLMError) as caught:
            complete(config_for(server, max_retries=2))
        assert caught.value.kind == "server" and caught.value.status == 500
        assert "HTTP 500" in str(caught.value) and "tried 3 times" in str(caught.value)
        assert len(server.requests()) == 3


def test_unauthorised_is_not_retried() -> None:
    with ScriptedModelServer(SCRIPT, ServerConfig(api_key="right")) as server:
        with pytest.raises(LLMError) as caught:
            complete(config_for(server, api_key="wrong"))
        assert caught.value.kind == "auth" and caught.value.status == 401
        assert "OPENAI_API_KEY" in str(caught.value)
        assert len(server.requests()) == 1


def test_not_found_is_not_retried_and_names_the_model() -> None:
    with ScriptedModelServer(SCRIPT, ServerConfig(fail_statuses=[404])) as server:
        with pytest.raises(LLMError) as caught:
            complete(config_for(server, model="no-such-model"))
        assert caught.value.kind == "not_found"
        assert "no-such-model" in str(caught.value) and "BRANCHWISE_MODEL" in str(caught.value)
        assert len(server.requests()) == 1


def test_unreachable_endpoint_gives_an_actionable_error() -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    config = LLMConfig(base_url=base_url, api_key=SecretStr("x"), max_retries=1, backoff_initial_s=0.01)
    with pytest.raises(LLMError) as caught:
        complete(config)
    message = str(caught.value)
    assert caught.value.kind == "unreachable"
    assert message.startswith(f"Cannot reach the model at {base_url}: connection refused")
    assert "OPENAI_BASE_URL" in message


def test_a_silent_server_times_out() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        with pytest.raises(LLMError) as caught:
            complete(config_for(server, timeout_s=0.2, max_retries=0), [ChatMessage(role="user", content="SLOW")])
        assert caught.value.kind == "timeout"
        assert "sent nothing for 0.2s" in str(caught.value)


def test_a_slow_model_that_keeps_talking_is_not_cut_off() -> None:
    """The timeout measures silence: an answer streamed over 1.2 s, a piece every 0.15 s, outlasts a 0.5 s timeout."""
    with ScriptedModelServer(SCRIPT) as server:
        started = time.monotonic()
        completion, client = complete(config_for(server, timeout_s=0.5, max_retries=0),
                                      [ChatMessage(role="user", content="TALK")])
        assert time.monotonic() - started >= 1.2
        assert completion.text == "one two three four five six seven eight"
        assert client.usage.calls == 1 and client.usage.completion_tokens > 0
        assert server.last_request.stream


def test_logprobs_are_requested_and_returned() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        messages = [ChatMessage(role="user", content="LOGPROBS")]
        completion, _ = complete(config_for(server), messages, logprobs=True, top_logprobs=1)
        [token] = completion.choices[0].logprobs or []
        assert (token.token, token.logprob, [t.token for t in token.top_logprobs]) == ("yes", -0.2, ["yes"])
        assert server.last_request.logprobs and server.last_request.top_logprobs == 1

        plain, _ = complete(config_for(server), messages)
        assert plain.choices[0].logprobs is None


def test_usage_accumulates_per_client_and_snapshots_are_immutable() -> None:
    async def run(server: ScriptedModelServer) -> tuple[list[Completion], Usage, Usage]:
        async with LLMClient(config_for(server)) as client:
            first = await client.complete(MESSAGES)
            snapshot = client.usage
            rest = [await client.complete(MESSAGES, n=2), await client.complete(MESSAGES)]
            return [first, *rest], snapshot, client.usage

    with ScriptedModelServer(SCRIPT) as server:
        completions, snapshot, total = asyncio.run(run(server))
        assert snapshot == completions[0].usage
        assert total.calls == 3
        assert total.prompt_tokens == sum(c.usage.prompt_tokens for c in completions) > 0
        assert total.completion_tokens == sum(c.usage.completion_tokens for c in completions) > 0
        assert total.total_tokens == total.prompt_tokens + total.completion_tokens


def test_concurrency_is_limited() -> None:
    """Counted at the server (answers waited for at once), not timed: a loaded machine slows both alike."""
    async def peak(server: ScriptedModelServer, limit: int) -> int:
        server.reset()
        async with LLMClient(config_for(server, max_concurrency=limit)) as client:
            await asyncio.gather(*(client.complete([ChatMessage(role="user", content="NAP")]) for _ in range(4)))
        return server.peak_concurrency()

    with ScriptedModelServer(SCRIPT) as server:
        assert asyncio.run(peak(server, 1)) == 1
        assert asyncio.run(peak(server, 4)) >= 2


def test_a_calls_seconds_are_the_models_time_not_the_wait_for_a_free_slot() -> None:
    """Calls made at once on a one-slot server queue; each counts its own request, so their seconds add up to no more
    than the time they all took (counted with the wait, the last of four would count all four)."""
    async def run(server: ScriptedModelServer) -> tuple[list[Completion], float]:
        async with LLMClient(config_for(server, max_concurrency=1)) as client:
            started = time.monotonic()
            done = await asyncio.gather(*(client.complete([ChatMessage(role="user", content="NAP")])
                                          for _ in range(4)))
            return list(done), time.monotonic() - started

    with ScriptedModelServer(SCRIPT) as server:
        completions, took = asyncio.run(run(server))
    assert all(c.seconds > 0 for c in completions)
    assert sum(c.seconds for c in completions) <= took + 0.01  # each rounded to the millisecond


def test_config_from_settings(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_API_KEY": "sk-123", "BRANCHWISE_MODEL": "qwen"}
    config = LLMConfig.from_settings(Settings.load(env, data_dir=tmp_path), temperature=0.0)
    assert (config.base_url, config.model) == (env["OPENAI_BASE_URL"], "qwen")
    assert config.api_key.get_secret_value() == "sk-123"
    assert (config.temperature, config.top_p, config.max_tokens, config.max_retries) == (0.0, 0.9, 384, 3)
    assert "sk-123" not in repr(config)
    defaults = LLMConfig.from_settings(Settings.load({}, data_dir=tmp_path))
    assert defaults.base_url == "https://api.openai.com/v1" and defaults.temperature == 1.0


def test_chat_message_converts_to_openai_dict() -> None:
    assert ChatMessage(role="user", content="hi").to_openai() == {"role": "user", "content": "hi"}


def test_a_failing_parallel_sample_raises_llm_error_not_an_exception_group() -> None:
    async def run(server: ScriptedModelServer) -> None:
        async with LLMClient(config_for(server, max_retries=0)) as client:
            await client.complete(MESSAGES, n=2)
            assert client.supports_n is False
            server.inject_failures([401])
            await client.complete(MESSAGES, n=3)

    with ScriptedModelServer(SCRIPT, ServerConfig(refuse_n=True)) as server:
        with pytest.raises(LLMError) as caught:
            asyncio.run(run(server))
        assert caught.value.kind == "auth"


def test_the_prompt_tokens_a_server_took_from_its_cache_are_counted() -> None:
    """llama.cpp (and OpenAI) say how much of a prompt came from the cache: the start it shares with the last one."""
    page = "OBJECTIVE: test\n" + "[1] link 'Books'\n" * 100
    first = [ChatMessage(role="system", content="You act."), ChatMessage(role="user", content=page + "first")]
    second = [ChatMessage(role="system", content="You act."), ChatMessage(role="user", content=page + "second")]

    async def run(server: ScriptedModelServer) -> tuple[list[Usage], Usage]:
        async with LLMClient(config_for(server)) as client:
            usages = [(await client.complete(messages)).usage for messages in (first, second)]
            return usages, client.usage

    with ScriptedModelServer(SCRIPT, ServerConfig(context_tokens=8192)) as server:
        (one, two), total = asyncio.run(run(server))
    assert one.cached_prompt_tokens == 0
    assert 400 < two.cached_prompt_tokens < two.prompt_tokens
    assert total.cached_prompt_tokens == two.cached_prompt_tokens
    # A server that does not say (OpenAI-like here) counts none.
    with ScriptedModelServer(SCRIPT) as server:
        assert asyncio.run(run(server))[1].cached_prompt_tokens == 0
