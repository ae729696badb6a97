"""What an OpenAI-compatible server says about itself, asked once when a model is opened: its context size, how many
requests it decodes at once, whether it counts tokens and reports prompt progress.

llama.cpp's server answers `/props` (`default_generation_settings.n_ctx`: the context one request gets, `total_slots`)
and `/tokenize`; vLLM lists `max_model_len` with its models. Others (OpenAI, Ollama's OpenAI API) say none of this and
the configured values stand. A probe never fails a run: what cannot be asked is simply not known.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from .llm import LLMConfig

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class EndpointFacts:
    server: str = "unknown"
    # The context one request gets, in tokens; None: the server does not say.
    context_tokens: int | None = None
    # Requests the server decodes at once; more wait in its queue, silent, and would time out there.
    parallel: int | None = None
    tokenize_url: str | None = None
    prompt_progress: bool = False
    # Whether each request should get a connection of its own (llama.cpp: LLMConfig.fresh_connections says why).
    fresh_connections: bool = False


def server_root(base_url: str) -> str:
    """The server's own address: llama.cpp and vLLM serve /props and /tokenize beside /v1, not under it."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def llama_cpp_facts(props: Mapping[str, Any], root: str) -> EndpointFacts | None:
    """llama.cpp's /props, or None when the answer is not llama.cpp's."""
    settings = props.get("default_generation_settings")
    if not isinstance(settings, Mapping) or "total_slots" not in props:
        return None
    return EndpointFacts(server="llama.cpp", context_tokens=_positive(settings.get("n_ctx")),
                         parallel=_positive(props.get("total_slots")), tokenize_url=f"{root}/tokenize",
                         prompt_progress=True, fresh_connections=True)


def vllm_facts(models: Sequence[Mapping[str, Any]], model: str) -> EndpointFacts | None:
    """vLLM's model list (`max_model_len` per model), or None when it has no such field."""
    for card in models:
        if card.get("id") == model or len(models) == 1:
            length = _positive(card.get("max_model_len"))
            if length is not None:
                return EndpointFacts(server="vLLM", context_tokens=length)
    return None


async def probe_endpoint(config: LLMConfig) -> EndpointFacts:
    """Ask the server at `config.base_url` what it is; EndpointFacts() when it does not say."""
    root = server_root(config.base_url)
    client = openai.AsyncOpenAI(base_url=config.base_url, api_key=config.api_key.get_secret_value() or "not-needed",
                                timeout=PROBE_TIMEOUT_S, max_retries=0)
    try:
        try:
            props = await client.get(f"{root}/props", cast_to=object)
        except openai.APIError as exc:
            log.debug("no llama.cpp /props at %s: %s", root, exc)
        else:
            facts = llama_cpp_facts(props, root) if isinstance(props, Mapping) else None
            if facts is not None:
                return facts
        try:
            listing = await client.models.list()
        except openai.APIError as exc:
            log.debug("no model list at %s: %s", config.base_url, exc)
            return EndpointFacts()
        cards = [{"id": card.id, **(card.model_extra or {})} for card in listing.data]
        return vllm_facts(cards, config.model) or EndpointFacts()
    finally:
        await client.close()


def fitted_config(config: LLMConfig, facts: EndpointFacts, context_tokens: int | None = None) -> LLMConfig:
    """`config` sized to the server: its context (unless `context_tokens`, the user's, says otherwise), no more
    requests at once than it decodes, and its token counting and progress reports where it offers them."""
    update: dict[str, Any] = {"prompt_progress": facts.prompt_progress, "tokenize_url": facts.tokenize_url,
                              "fresh_connections": facts.fresh_connections}
    chosen = context_tokens or facts.context_tokens
    if chosen is not None:
        update["context_tokens"] = chosen
    if facts.parallel is not None:
        update["max_concurrency"] = min(config.max_concurrency, facts.parallel)
    return config.model_copy(update=update)


def capacity(config: LLMConfig) -> str:
    """What a run assumes the model takes: `8192 tokens of context, 1 request(s) at once`."""
    return f"{config.context_tokens} tokens of context, {config.max_concurrency} request(s) at once"


def describe(config: LLMConfig, facts: EndpointFacts) -> str:
    """One line for the log: what the run assumes about the model's server."""
    counting = "tokens counted by the server" if config.tokenize_url else "tokens estimated as characters / 4"
    return f"{facts.server} server, {capacity(config)}, {counting}"
