"""The scripted model over real HTTP, driven by the real openai client."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam as Message
from pydantic import ValidationError

from branchwise.scripted_model import DEFAULT_FALLBACK, Script, ScriptedModelServer, ServerConfig


def make_script(data: dict[str, Any]) -> Script:
    return Script.model_validate(data)


def chat(server: ScriptedModelServer, messages: list[Message], **params: Any) -> Any:
    async def run() -> Any:
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
            return await client.chat.completions.create(model="test-model", messages=messages, **params)

    return asyncio.run(run())


def user(text: str) -> list[Message]:
    return [{"role": "user", "content": text}]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


RULES = make_script(
    {
        "rules": [
            {"name": "once", "when_contains": ["ONCE"], "max_uses": 1, "reply": "first time"},
            {"name": "both", "when_contains": ["alpha", "beta"], "reply": "both words"},
            {"name": "last-user", "when_contains": ["SYSWORD"], "search_in": "last_user", "reply": "in last user"},
            {"name": "regex", "when_regex": r"\[\d+\] textbox", "reply": "saw a textbox"},
            {"name": "any-sys", "when_contains": ["SYSWORD"], "reply": "anywhere"},
            {"name": "cycle", "when_contains": ["cycle"], "replies": ["a", "b", "c"]},
        ]
    }
)


def test_rules_match_in_order_with_all_conditions() -> None:
    with ScriptedModelServer(RULES) as server:
        assert chat(server, user("alpha and beta")).choices[0].message.content == "both words"
        assert chat(server, user("only alpha")).choices[0].message.content == DEFAULT_FALLBACK
        assert chat(server, user("[164] textbox 'Search'")).choices[0].message.content == "saw a textbox"
        # ONCE also contains nothing else: the first use matches, the second falls through to the fallback.
        assert chat(server, user("ONCE")).choices[0].message.content == "first time"
        assert chat(server, user("ONCE")).choices[0].message.content == DEFAULT_FALLBACK
        assert server.rule_uses()["once"] == 1


def test_search_in_last_user_only_looks_at_the_last_user_message() -> None:
    with ScriptedModelServer(RULES) as server:
        in_system: list[Message] = [{"role": "system", "content": "SYSWORD"}, {"role": "user", "content": "hello"}]
        assert chat(server, in_system).choices[0].message.content == "anywhere"
        in_last: list[Message] = [{"role": "system", "content": "x"}, {"role": "user", "content": "SYSWORD"}]
        assert chat(server, in_last).choices[0].message.content == "in last user"


def test_replies_cycle_across_choices_and_requests() -> None:
    with ScriptedModelServer(RULES) as server:
        response = chat(server, user("cycle"), n=2)
        assert [c.message.content for c in response.choices] == ["a", "b"]
        assert [c.index for c in response.choices] == [0, 1]
        assert chat(server, user("cycle")).choices[0].message.content == "c"
        assert chat(server, user("cycle")).choices[0].message.content == "a"


def test_fallback_is_recorded_and_configurable() -> None:
    with ScriptedModelServer(make_script({"fallback": "nothing scripted"})) as server:
        assert chat(server, user("anything")).choices[0].message.content == "nothing scripted"
        [unmatched] = server.unmatched()
        assert unmatched.fallback and unmatched.rule is None and unmatched.last_user == "anything"


def test_refuse_n_behaves_like_llama_cpp() -> None:
    with ScriptedModelServer(RULES, ServerConfig(refuse_n=True)) as server:
        with pytest.raises(openai.BadRequestError) as caught:
            chat(server, user("cycle"), n=3)
        assert caught.value.status_code == 400
        assert caught.value.param == "n"
        assert chat(server, user("cycle"), n=1).choices[0].message.content == "a"
        assert [r.status for r in server.requests()] == [400, 200]


def test_ignore_n_returns_a_single_choice() -> None:
    with ScriptedModelServer(RULES, ServerConfig(ignore_n=True)) as server:
        assert len(chat(server, user("cycle"), n=3).choices) == 1


def test_logprobs_only_when_requested_and_scripted() -> None:
    script = make_script(
        {
            "rules": [
                {
                    "when_contains": ["lp"],
                    "reply": {
                        "text": "yes",
                        "logprobs": [
                            {
                                "token": "yes",
                                "logprob": -0.1,
                                "top_logprobs": [{"token": "yes", "logprob": -0.1}, {"token": "no", "logprob": -2.4}],
                            }
                        ],
                    },
                },
                {"when_contains": ["plain"], "reply": "no logprobs here"},
            ]
        }
    )
    with ScriptedModelServer(script) as server:
        choice = chat(server, user("lp"), logprobs=True, top_logprobs=1).choices[0]
        [token] = choice.logprobs.content
        assert (token.token, token.logprob) == ("yes", -0.1)
        assert [t.token for t in token.top_logprobs] == ["yes"]
        assert chat(server, user("lp")).choices[0].logprobs is None
        assert chat(server, user("plain"), logprobs=True).choices[0].logprobs is None


def test_usage_approximates_tokens_from_characters() -> None:
    script = make_script({"rules": [{"reply": "x" * 40}]})
    with ScriptedModelServer(script) as server:
        usage = chat(server, user("y" * 80), n=2).usage
        assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (20, 20, 40)
        assert chat(server, user("hi")).usage.prompt_tokens == 1


def test_requests_are_recorded_with_their_parameters() -> None:
    with ScriptedModelServer(RULES) as server:
        messages: list[Message] = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "alpha beta"}]
        chat(server, messages, temperature=0.3, top_p=0.9, max_tokens=50, stop=["\n\n"])
        recorded = server.last_request
        assert recorded.model == "test-model"
        assert [(m.role, m.content) for m in recorded.messages] == [("system", "be brief"), ("user", "alpha beta")]
        assert (recorded.temperature, recorded.top_p, recorded.max_tokens, recorded.stop) == (0.3, 0.9, 50, ["\n\n"])
        assert (recorded.n, recorded.status, recorded.rule, recorded.replies) == (1, 200, "both", ["both words"])
        server.reset()
        assert server.requests() == []


def test_stop_sequences_and_token_limit_apply_to_replies() -> None:
    script = make_script({"rules": [{"reply": "keep this STOP drop that"}]})
    with ScriptedModelServer(script) as server:
        assert chat(server, user("x"), stop=["STOP"]).choices[0].message.content == "keep this "
        limited = chat(server, user("x"), max_tokens=2).choices[0]
        assert (limited.message.content, limited.finish_reason) == ("keep thi", "length")


def test_streaming_sends_sse_chunks() -> None:
    script = make_script({"rules": [{"reply": "click [12] now"}]})

    async def run(server: ScriptedModelServer) -> tuple[str, Any]:
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
            stream = await client.chat.completions.create(
                model="m", messages=user("x"), stream=True, stream_options={"include_usage": True}
            )
            text, usage = "", None
            async for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].delta.content or ""
                usage = chunk.usage or usage
            return text, usage

    with ScriptedModelServer(script) as server:
        text, usage = asyncio.run(run(server))
        assert text == "click [12] now"
        assert usage.completion_tokens == 3
        assert server.last_request.stream


def test_delay_per_reply() -> None:
    script = make_script({"rules": [{"reply": {"text": "slow", "delay_s": 0.3}}]})
    with ScriptedModelServer(script) as server:
        started = time.monotonic()
        chat(server, user("x"))
        assert time.monotonic() - started >= 0.3


def test_injected_failures_come_first_then_normal_answers() -> None:
    with ScriptedModelServer(RULES, ServerConfig(fail_statuses=[429])) as server:
        server.inject_failures([500])
        with pytest.raises(openai.RateLimitError):
            chat(server, user("alpha beta"))
        with pytest.raises(openai.InternalServerError):
            chat(server, user("alpha beta"))
        assert chat(server, user("alpha beta")).choices[0].message.content == "both words"
        assert [r.status for r in server.requests()] == [429, 500, 200]


def test_api_key_is_enforced_when_configured() -> None:
    with ScriptedModelServer(RULES, ServerConfig(api_key="secret")) as server:
        with pytest.raises(openai.AuthenticationError):
            chat(server, user("alpha beta"))

        async def with_key() -> str:
            async with openai.AsyncOpenAI(base_url=server.base_url, api_key="secret", max_retries=0) as client:
                response = await client.chat.completions.create(model="m", messages=user("alpha beta"))
                return response.choices[0].message.content or ""

        assert asyncio.run(with_key()) == "both words"


def test_models_endpoint_lists_the_configured_model() -> None:
    async def run(server: ScriptedModelServer) -> list[str]:
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
            return [m.id async for m in client.models.list()]

    with ScriptedModelServer(Script(), ServerConfig(model_name="scripted-7b")) as server:
        assert asyncio.run(run(server)) == ["scripted-7b"]


def test_async_context_manager_and_fixed_port() -> None:
    port = free_port()

    async def run() -> str:
        async with ScriptedModelServer(RULES, ServerConfig(port=port)) as server:
            assert server.base_url == f"http://127.0.0.1:{port}/v1"
            async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
                response = await client.chat.completions.create(model="m", messages=user("alpha beta"))
                return response.choices[0].message.content or ""

    assert asyncio.run(run()) == "both words"


def test_script_loads_from_json_file_with_shorthands(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "fallback": "fb",
                "rules": [
                    {"when_contains": ["a"], "reply": "one"},
                    {"when_regex": "b+", "replies": ["two", {"text": "three", "delay_s": 0.1}], "max_uses": 2},
                ],
            }
        )
    )
    script = Script.load(path)
    assert [r.text for r in script.rules[1].replies] == ["two", "three"]
    assert script.rules[1].replies[1].delay_s == 0.1
    copy = tmp_path / "copy.json"
    script.save(copy)
    assert Script.load(copy) == script


def test_script_rejects_typos_and_bad_regexes() -> None:
    with pytest.raises(ValidationError):
        make_script({"rules": [{"when_contain": ["a"], "reply": "x"}]})
    with pytest.raises(ValidationError):
        make_script({"rules": [{"when_regex": "(", "reply": "x"}]})
    with pytest.raises(ValidationError):
        make_script({"rules": [{"reply": "x", "replies": ["y"]}]})
    with pytest.raises(ValidationError):
        make_script({"rules": [{"when_contains": ["a"]}]})


def test_command_line_entry_point_serves_a_script_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rules": [{"reply": "from the cli"}]}))
    port = free_port()
    command = [sys.executable, "-m", "branchwise.scripted_model", "--script", str(path), "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1) as response:
                    assert json.load(response)["data"][0]["id"] == "scripted"
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "CLI server did not start"
                time.sleep(0.1)

        async def ask() -> str:
            base_url = f"http://127.0.0.1:{port}/v1"
            async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
                response = await client.chat.completions.create(model="m", messages=user("hi"))
                return response.choices[0].message.content or ""

        assert asyncio.run(ask()) == "from the cli"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_request_naming_another_host_is_refused() -> None:
    """A page that rebinds its hostname to 127.0.0.1 reaches the port but still sends its own Host: refused."""
    with ScriptedModelServer(RULES) as server:
        models = server.base_url + "/models"
        with urllib.request.urlopen(models, timeout=5) as reply:
            assert reply.status == 200
        request = urllib.request.Request(models, headers={"Host": f"rebound.example:{server.port}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 403
