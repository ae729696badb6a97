"""Which model answers: a configured OpenAI-compatible endpoint, or a scripted one (clearly labelled as such)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from importlib import resources

from pydantic import SecretStr

from .core.status import ROLES, Role
from .endpoint import capacity, describe, fitted_config, probe_endpoint
from .llm import LLMClient, LLMConfig
from .local_model import LocalModelServer, LocalServerConfig, assemble
from .scripted_model import ReplyEngine, Script, ScriptedModelServer, ServerConfig
from .search.roles import ModelRoles, RoleModel
from .settings import Settings

log = logging.getLogger(__name__)


SCRIPTED_MODEL_NAME = "scripted"


class ModelNotConfigured(RuntimeError):
    pass


def recorded_model_name(settings: Settings, *, scripted: bool, local: LocalServerConfig | None) -> str | None:
    """The model name `open_model` will give its client (runs and eval results are recorded under it), known without
    opening the model; None where no model is configured."""
    if scripted:
        return SCRIPTED_MODEL_NAME
    if local is not None:
        return local.model.key
    return LLMConfig.from_settings(settings).model if settings.model_configured else None


@dataclass
class ModelSetup:
    client: LLMClient
    scripted: bool
    description: str
    # Search asks a value and a reward model too; by default they are the policy's client.
    roles: ModelRoles = field(init=False)
    role_clients: dict[Role, LLMClient] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clients = {role: self.role_clients.get(role, self.client) for role in ROLES}
        self.roles = ModelRoles(*(RoleModel(clients[role], role) for role in ROLES))


def bundled_demo_script() -> Script:
    with resources.as_file(resources.files("branchwise.demo") / "demo_script.json") as path:
        return Script.load(path)


@contextlib.asynccontextmanager
async def open_model(
    settings: Settings, *, script: Script | None = None, fallback_script: Script | None = None,
    local: LocalServerConfig | None = None,
) -> AsyncIterator[ModelSetup]:
    """The model for a run. An explicit script wins; then the local model (`local`, --local-model); then the configured
    endpoint; then `fallback_script` if given."""
    if script is None and local is not None:
        async with serve_local_model(settings, local) as setup:
            yield setup
        return
    chosen = script
    if chosen is None and not settings.model_configured:
        if fallback_script is None:
            raise ModelNotConfigured(
                "No model is configured. Set OPENAI_BASE_URL (and OPENAI_API_KEY, BRANCHWISE_MODEL) to any "
                "OpenAI-compatible endpoint, e.g. OPENAI_BASE_URL=http://127.0.0.1:8080/v1 for llama.cpp, "
                "or pass --script FILE to answer from a script."
            )
        chosen = fallback_script
    if chosen is None:
        config = await sized_to_server(LLMConfig.from_settings(settings), settings)
        # A different model for judging states or actions, on the same endpoint.
        judges: dict[Role, str | None] = {"value": settings.value_model, "reward": settings.reward_model}
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(LLMClient(config))
            extra: dict[Role, LLMClient] = {}
            for role, name in judges.items():
                if name and name != config.model:
                    extra[role] = await stack.enter_async_context(LLMClient(config.model_copy(update={"model": name})))
            described = "".join(f", {role} model {c.config.model}" for role, c in extra.items())
            yield ModelSetup(client, False, f"{config.model} at {config.base_url}{described} ({capacity(config)})",
                             extra)
        return
    async with serve_model(chosen, SCRIPTED_MODEL_NAME,
                           "SCRIPTED model at {url} (canned answers, not a real model)") as setup:
        yield setup


@contextlib.asynccontextmanager
async def serve_local_model(settings: Settings, config: LocalServerConfig) -> AsyncIterator[ModelSetup]:
    """The shipped local model, joined once into the data folder and served on 127.0.0.1 for as long as the run."""
    path = await asyncio.to_thread(assemble, config.model, settings.data_dir / "models")
    if settings.context_tokens is not None:
        config = replace(config, context_tokens=settings.context_tokens)
    server = LocalModelServer(path, config)
    await asyncio.to_thread(server.__enter__)  # loading takes seconds
    try:
        llm = await sized_to_server(LLMConfig.from_settings(settings, base_url=server.base_url,
                                                            api_key=SecretStr(server.api_key), model=config.model.key),
                                  settings)
        async with LLMClient(llm) as client:
            yield ModelSetup(client, False, f"local {config.model.name} at {server.base_url} ({capacity(llm)})")
    finally:
        server.__exit__(*sys.exc_info())  # a run cut short (Ctrl-C, SIGTERM) is told why it waits


async def sized_to_server(config: LLMConfig, settings: Settings) -> LLMConfig:
    """`config` sized to what its server says about itself (context, parallel requests, tokenizer), the user's
    context setting first."""
    facts = await probe_endpoint(config)
    fitted = fitted_config(config, facts, settings.context_tokens)
    log.info("model server: %s", describe(fitted, facts))
    return fitted


@contextlib.asynccontextmanager
async def serve_model(source: Script | ReplyEngine, name: str, description: str) -> AsyncIterator[ModelSetup]:
    """A model that is not an LLM (a script, the simulated model) served over HTTP like any OpenAI-compatible
    endpoint, so the run's own client code is used. `description` may name the server's `{url}`."""
    server = ScriptedModelServer(source, ServerConfig(model_name=name))
    await asyncio.to_thread(server.start)
    try:
        config = LLMConfig(base_url=server.base_url, api_key=SecretStr(name), model=name)
        async with LLMClient(config) as client:
            yield ModelSetup(client, True, description.replace("{url}", server.base_url))
    finally:
        await asyncio.to_thread(server.stop)

