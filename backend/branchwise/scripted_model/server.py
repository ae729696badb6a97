"""Runs the scripted model as a real HTTP server on a background thread, for tests and the offline demo."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from types import TracebackType

from ..serving import BackgroundServer
from .app import ServerState, create_app
from .config import ServerConfig
from .engine import ReplyEngine, ScriptEngine
from .faults import FailureQueue
from .recording import RecordedRequest, RequestLog
from .script import Script

logger = logging.getLogger(__name__)


class ScriptedModelServer:
    """An OpenAI-compatible endpoint answering from a Script (or any ReplyEngine, such as the simulated model). Use as
    a (sync or async) context manager."""

    def __init__(self, source: Script | ReplyEngine, config: ServerConfig | None = None) -> None:
        self._config = config or ServerConfig()
        self._state = ServerState(
            config=self._config,
            engine=ScriptEngine(source) if isinstance(source, Script) else source,
            log=RequestLog(),
            faults=FailureQueue(self._config.fail_statuses),
        )
        self._background = BackgroundServer(create_app(self._state), self._config.host, self._config.port,
                                            "scripted-model", self._config.startup_timeout_s)

    # -- lifecycle ----------------------------------------------------------------------------------------------------

    def start(self) -> ScriptedModelServer:
        """Start serving and block until the server accepts requests."""
        self._background.start()
        logger.info("scripted model listening at %s", self.base_url)
        return self

    def stop(self) -> None:
        self._background.stop()

    def serve_forever(self) -> None:
        """Serve until interrupted (the command-line entry point)."""
        self.start()
        try:
            threading.Event().wait()
        finally:
            self.stop()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> ScriptedModelServer:
        # Starting blocks briefly while polling for readiness; keep that off the caller's event loop.
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

    # -- addresses ----------------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._background.port

    @property
    def base_url(self) -> str:
        return f"http://{self._config.host}:{self.port}/v1"

    @property
    def config(self) -> ServerConfig:
        return self._config

    # -- inspection and control for tests -----------------------------------------------------------------------------

    def requests(self) -> list[RecordedRequest]:
        """Every chat-completions request so far, in arrival order (including rejected ones)."""
        return self._state.log.snapshot()

    @property
    def last_request(self) -> RecordedRequest:
        recorded = self._state.log.snapshot()
        if not recorded:
            raise LookupError("the scripted model has received no requests")
        return recorded[-1]

    def unmatched(self) -> list[RecordedRequest]:
        """Requests answered with the fallback: usually a prompt the script did not anticipate."""
        return [r for r in self._state.log.snapshot() if r.fallback]

    def peak_concurrency(self) -> int:
        """The most delayed answers that were waited for at once since the start (or the last reset)."""
        return self._state.in_flight.peak

    def rule_uses(self) -> dict[str, int]:
        return self._state.engine.uses()

    def inject_failures(self, statuses: Iterable[int]) -> None:
        """Answer the next requests with these HTTP statuses, one each, in order."""
        self._state.faults.extend(statuses)

    def reset(self) -> None:
        """Forget recorded requests and rule usage; pending injected failures are kept."""
        self._state.log.clear()
        self._state.engine.reset()
        self._state.in_flight.peak = self._state.in_flight.now
