"""The simulated model as a run's model: its engine served over HTTP, like any OpenAI-compatible endpoint."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ...models import ModelSetup, serve_model
from .engine import SimulatedEngine


@contextlib.asynccontextmanager
async def open_simulated_model(engine: SimulatedEngine) -> AsyncIterator[ModelSetup]:
    spec = engine.spec
    async with serve_model(engine, spec.name, f"SIMULATED model {spec.name} at {{url}} (answers from the tasks' "
                           f"reference solutions, wrong at rate {spec.error_rate:g}; not a real model)") as setup:
        yield setup
