"""Which model answers: a configured OpenAI-compatible endpoint, or a scripted one (clearly labelled as such)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from importlib import resources

from pydantic import SecretStr

from .core.status import ROLES, Role
from .llm import LLMClient, LLMConfig
from .scripted_model import Script, ScriptedModelServer
from .search.roles import ModelRoles, RoleModel

log = logging.getLogger(__name__)

MODEL_ENV_VARS = ("OPENAI_BASE_URL", "BRANCHWISE_MODEL")
# A different model for judging states or actions, on the same endpoint.
ROLE_MODEL_ENV_VARS: dict[Role, str] = {"value": "BRANCHWISE_VALUE_MODEL", "reward": "BRANCHWISE_REWARD_MODEL"}


class ModelNotConfigured(RuntimeError):
    pass


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


def model_configured(environ: Mapping[str, str]) -> bool:
    return any(environ.get(name) for name in MODEL_ENV_VARS)


def bundled_demo_script() -> Script:
    with resources.as_file(resources.files("branchwise.demo") / "demo_script.json") as path:
        return Script.load(path)


@contextlib.asynccontextmanager
async def open_model(
    *, script: Script | None = None, fallback_script: Script | None = None, environ: Mapping[str, str] | None = None
) -> AsyncIterator[ModelSetup]:
    """The model for a run. An explicit script wins; then the environment; then `fallback_script` if given."""
    env = os.environ if environ is None else environ
    chosen = script
    if chosen is None and not model_configured(env):
        if fallback_script is None:
            raise ModelNotConfigured(
                "No model is configured. Set OPENAI_BASE_URL (and OPENAI_API_KEY, BRANCHWISE_MODEL) to any "
                "OpenAI-compatible endpoint, e.g. OPENAI_BASE_URL=http://127.0.0.1:8080/v1 for llama.cpp, "
                "or pass --script FILE to answer from a script."
            )
        chosen = fallback_script
    if chosen is None:
        config = LLMConfig.from_env(env)
        async with contextlib.AsyncExitStack() as stack:
            client = await stack.enter_async_context(LLMClient(config))
            extra: dict[Role, LLMClient] = {}
            for role, variable in ROLE_MODEL_ENV_VARS.items():
                if env.get(variable) and env[variable] != config.model:
                    role_config = config.model_copy(update={"model": env[variable]})
                    extra[role] = await stack.enter_async_context(LLMClient(role_config))
            described = "".join(f", {role} model {c.config.model}" for role, c in extra.items())
            yield ModelSetup(client, False, f"{config.model} at {config.base_url}{described}", extra)
        return
    server = ScriptedModelServer(chosen)
    await asyncio.to_thread(server.start)
    try:
        config = LLMConfig(base_url=server.base_url, api_key=SecretStr("scripted"), model="scripted")
        async with LLMClient(config) as client:
            yield ModelSetup(client, True, f"SCRIPTED model at {server.base_url} (canned answers, not a real model)")
    finally:
        await asyncio.to_thread(server.stop)

