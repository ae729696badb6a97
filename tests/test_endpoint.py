"""What a model server says about itself sizes the run's prompts and parallel requests: llama.cpp's /props and
/tokenize, vLLM's max_model_len, nothing from others; the user's --context-tokens wins."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from branchwise.chat_model import SHRUNK_MARKER
from branchwise.cli import parse_args
from branchwise.endpoint import (
    EndpointFacts,
    fitted_config,
    llama_cpp_facts,
    probe_endpoint,
    server_root,
    vllm_facts,
)
from branchwise.llm import ChatMessage, LLMClient, LLMConfig
from branchwise.models import open_model, recorded_model_name
from branchwise.scripted_model import Script, ScriptedModelServer, ServerConfig
from branchwise.search.roles import RoleModel
from branchwise.settings import Settings, SettingsError

# The fields of a real answer of llama.cpp's /props (xllamacpp 2026.10.11549, Qwen2.5-Coder-1.5B, -c 8192 -np 1).
LLAMA_PROPS = {
    "default_generation_settings": {"params": {"temperature": 0.8, "n_predict": -1}, "n_ctx": 8192},
    "total_slots": 1, "model_alias": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "build_info": "b0-unknown",
    "endpoint_slots": True, "endpoint_props": False,
}
SCRIPT = Script.model_validate({"rules": [{"name": "any", "reply": "stop [done]"}]})


def test_llama_cpp_props_give_context_slots_tokenizer_and_progress() -> None:
    facts = llama_cpp_facts(LLAMA_PROPS, "http://127.0.0.1:8080")
    assert facts == EndpointFacts(server="llama.cpp", context_tokens=8192, parallel=1,
                                  tokenize_url="http://127.0.0.1:8080/tokenize", prompt_progress=True,
                                  fresh_connections=True)
    assert llama_cpp_facts({"object": "list"}, "http://x") is None


def test_vllm_reports_its_context_with_the_model() -> None:
    assert vllm_facts([{"id": "qwen", "max_model_len": 32768}], "qwen") == EndpointFacts("vLLM", 32768)
    assert vllm_facts([{"id": "gpt-4o"}], "gpt-4o") is None


def test_the_server_root_is_beside_v1() -> None:
    assert server_root("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080"
    assert server_root("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080"
    assert server_root("http://host/api") == "http://host/api"


def test_fitting_takes_the_servers_facts_and_the_users_context_first() -> None:
    facts = EndpointFacts("llama.cpp", 4096, 1, "http://x/tokenize", True, fresh_connections=True)
    fitted = fitted_config(LLMConfig(), facts)
    assert (fitted.context_tokens, fitted.max_concurrency, fitted.tokenize_url, fitted.prompt_progress,
            fitted.fresh_connections) == (4096, 1, "http://x/tokenize", True, True)
    assert fitted_config(LLMConfig(), facts, context_tokens=2048).context_tokens == 2048
    unknown = fitted_config(LLMConfig(max_concurrency=4), EndpointFacts())
    assert (unknown.context_tokens, unknown.max_concurrency, unknown.prompt_progress) == (8192, 4, False)


def test_probing_a_llama_cpp_like_server_over_http() -> None:
    with ScriptedModelServer(SCRIPT, ServerConfig(context_tokens=2048, slots=2)) as server:
        facts = asyncio.run(probe_endpoint(LLMConfig(base_url=server.base_url)))
        root = server_root(server.base_url)
    assert facts == EndpointFacts("llama.cpp", 2048, 2, f"{root}/tokenize", True, fresh_connections=True)


def test_a_server_that_says_nothing_keeps_the_defaults() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        assert asyncio.run(probe_endpoint(LLMConfig(base_url=server.base_url))) == EndpointFacts()
    assert asyncio.run(probe_endpoint(LLMConfig(base_url="http://127.0.0.1:9/v1"))) == EndpointFacts()


def test_a_run_against_a_small_context_server_fits_its_prompts_and_is_never_refused(tmp_path: Path) -> None:
    """Configured like a user's llama.cpp with 1024 tokens of context and one slot: the run's client is sized to it,
    and a prompt four times the context is cut (by the server's own token count) before it is sent."""
    page = "\n".join(f"[{i}] link 'Product number {i}'" for i in range(600))
    messages = [ChatMessage(role="system", content="You are a browser agent."),
                ChatMessage(role="user", content=f"OBSERVATION:\n{page}\nOBJECTIVE: find the tent")]

    async def run(server: ScriptedModelServer) -> tuple[LLMConfig, str, str]:
        settings = Settings(data_dir=tmp_path, base_url=server.base_url, api_key=SecretStr("k"), model="scripted")
        async with open_model(settings) as model:
            completion = await RoleModel(model.client, "policy").complete(messages)
            return model.client.config, model.description, completion.text

    with ScriptedModelServer(SCRIPT, ServerConfig(context_tokens=1024)) as server:
        config, description, answer = asyncio.run(run(server))
        statuses = [r.status for r in server.requests()]
        sent = server.last_request.messages[-1].content
    assert (config.context_tokens, config.max_concurrency, config.prompt_progress) == (1024, 1, True)
    assert "1024 tokens of context, 1 request(s) at once" in description
    assert answer == "stop [done]" and statuses == [200]
    assert SHRUNK_MARKER in sent and sent.endswith("OBJECTIVE: find the tent")


def test_the_user_sets_the_context_on_the_command_line_or_in_the_environment(tmp_path: Path) -> None:
    args = parse_args(["run", "--data-dir", str(tmp_path), "--context-tokens", "4096", "--start-url", "http://x",
                       "task"], environ={})
    assert args.settings.context_tokens == 4096
    env = parse_args(["run", "--data-dir", str(tmp_path), "--start-url", "http://x", "task"],
                     environ={"BRANCHWISE_CONTEXT_TOKENS": "16384"})
    assert env.settings.context_tokens == 16384
    with pytest.raises(SettingsError, match="context-tokens"):
        parse_args(["run", "--data-dir", str(tmp_path), "--context-tokens", "100", "--start-url", "http://x", "t"],
                   environ={})


def test_a_server_that_cannot_count_is_not_asked_again(caplog: pytest.LogCaptureFixture) -> None:
    async def run(server: ScriptedModelServer) -> list[int]:
        config = LLMConfig(base_url=server.base_url, tokenize_url=f"{server_root(server.base_url)}/nowhere")
        async with LLMClient(config) as client:
            return [await client.count_tokens([ChatMessage(role="user", content="x" * 400)]) for _ in range(2)]

    with ScriptedModelServer(SCRIPT) as server, caplog.at_level(logging.WARNING):
        assert asyncio.run(run(server)) == [104, 104]
    assert sum("did not count tokens" in r.getMessage() for r in caplog.records) == 1


class Tokenizer:
    """A bare HTTP server answering /tokenize with three tokens; it drops the first `drops` connections unanswered
    and keeps each request's head (lower-cased)."""

    def __init__(self, drops: int = 0) -> None:
        self.drops = drops
        self.heads: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.heads.append((await reader.readuntil(b"\r\n\r\n")).lower())
        if self.drops:
            self.drops -= 1
        else:
            body = b'{"tokens": [1, 2, 3]}'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
        writer.close()

    async def counts(self, calls: int, **config: object) -> list[int]:
        server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        root = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        settings = LLMConfig.model_validate({"base_url": f"{root}/v1", "tokenize_url": f"{root}/tokenize"} | config)
        async with server, LLMClient(settings) as client:
            return [await client.count_tokens([ChatMessage(role="user", content="x" * 400)]) for _ in range(calls)]


def test_a_tokenizer_that_could_not_be_reached_is_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    """A dropped connection is tried once more, and a call that still fails is estimated from characters without
    giving up on the server's counts for later calls."""
    with caplog.at_level(logging.WARNING):
        # The first call's two tries are dropped (an estimate: 400 / 4 + 4), the second's first try: counted after.
        assert asyncio.run(Tokenizer(drops=3).counts(3)) == [104, 7, 7]
    assert sum("estimating them from characters this time" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("fresh", [True, False])
def test_a_llama_cpp_endpoint_gets_a_new_connection_for_every_request(fresh: bool) -> None:
    """llama.cpp's server dropped some reused keep-alive connections without an answer; other servers keep them."""
    tokenizer = Tokenizer()
    asyncio.run(tokenizer.counts(1, fresh_connections=fresh))
    [head] = tokenizer.heads
    assert (b"\r\nconnection: close\r\n" in head) == fresh


@pytest.mark.parametrize("model, script", [("served-model", None), (None, None), (None, SCRIPT)])
def test_the_name_a_model_is_recorded_under_is_known_before_it_is_opened(tmp_path: Path, model: str | None,
                                                                         script: Script | None) -> None:
    """What `eval` compares its results file against before it starts a model is the name the opened model's client
    has (the configured model's, or the scripted one's); with nothing configured, no name."""
    with ScriptedModelServer(SCRIPT) as server:
        settings = Settings(data_dir=tmp_path, base_url=server.base_url, model=model)

        async def opened() -> str:
            async with open_model(settings, script=script) as setup:
                return setup.client.config.model

        assert recorded_model_name(settings, scripted=script is not None, local=None) == asyncio.run(opened())
    assert recorded_model_name(Settings(data_dir=tmp_path), scripted=False, local=None) is None
