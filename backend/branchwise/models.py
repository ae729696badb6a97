"""Which model answers: a configured OpenAI-compatible endpoint, or a scripted one (clearly labelled as such)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from importlib import resources

from .llm import LLMClient, LLMConfig
from .scripted_model import Script, ScriptedModelServer

log = logging.getLogger(__name__)

MODEL_ENV_VARS = ("OPENAI_BASE_URL", "BRANCHWISE_MODEL")


class ModelNotConfigured(RuntimeError):
    pass


@dataclass
class ModelSetup:
    client: LLMClient
    scripted: bool
    description: str


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
        async with LLMClient(config) as client:
            yield ModelSetup(client, False, f"{config.model} at {config.base_url}")
        return
    server = ScriptedModelServer(chosen)
    await asyncio.to_thread(server.start)
    try:
        config = LLMConfig(base_url=server.base_url, api_key="scripted", model="scripted")
        async with LLMClient(config) as client:
            yield ModelSetup(client, True, f"SCRIPTED model at {server.base_url} (canned answers, not a real model)")
    finally:
        await asyncio.to_thread(server.stop)

