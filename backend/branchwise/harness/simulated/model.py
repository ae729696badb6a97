"""The simulated model as a run's model: its engine served over HTTP, like any OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from pydantic import SecretStr

from ...llm import LLMClient, LLMConfig
from ...models import ModelSetup
from ...scripted_model import ScriptedModelServer, ServerConfig
from .engine import SimulatedEngine


@contextlib.asynccontextmanager
async def open_simulated_model(engine: SimulatedEngine) -> AsyncIterator[ModelSetup]:
    spec = engine.spec
    server = ScriptedModelServer(engine, ServerConfig(model_name=spec.name))
    await asyncio.to_thread(server.start)
    try:
        config = LLMConfig(base_url=server.base_url, api_key=SecretStr("simulated"), model=spec.name)
        async with LLMClient(config) as client:
            yield ModelSetup(client, True, f"SIMULATED model {spec.name} at {server.base_url} (answers from the "
                                           f"tasks' reference solutions, wrong at rate {spec.error_rate:g}; "
                                           "not a real model)")
    finally:
        await asyncio.to_thread(server.stop)
