"""Runs the scripted model as a real HTTP server on a background thread, for tests and the offline demo."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterable
from types import TracebackType

import uvicorn

from .app import ServerState, create_app
from .config import ServerConfig
from .engine import ScriptEngine
from .faults import FailureQueue
from .recording import RecordedRequest, RequestLog
from .script import Script

logger = logging.getLogger(__name__)


class ScriptedModelServer:
    """An OpenAI-compatible endpoint answering from a Script. Use as a (sync or async) context manager."""

    def __init__(self, script: Script, config: ServerConfig | None = None) -> None:
        self._config = config or ServerConfig()
        self._state = ServerState(
            config=self._config,
            engine=ScriptEngine(script),
            log=RequestLog(),
            faults=FailureQueue(self._config.fail_statuses),
        )
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------------

    def _bind(self) -> socket.socket:
        # Binding here, not inside uvicorn, lets port 0 resolve to a known free port before the thread starts.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._config.host, self._config.port))
        return sock

    def _uvicorn(self) -> uvicorn.Server:
        app = create_app(self._state)
        return uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))

    def start(self) -> ScriptedModelServer:
        """Start serving and block until the server accepts requests."""
        if self._thread is not None:
            raise RuntimeError("scripted model server already started")
        self._socket = self._bind()
        self._server = self._uvicorn()
        server, sock = self._server, self._socket
        self._thread = threading.Thread(target=lambda: server.run(sockets=[sock]), name="scripted-model", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self._config.startup_timeout_s
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"scripted model server failed to start on {self._config.host}")
            time.sleep(0.01)
        logger.info("scripted model listening at %s", self.base_url)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server, self._thread, self._socket = None, None, None

    def serve_forever(self) -> None:
        """Serve on the calling thread until interrupted (the command-line entry point)."""
        self._socket = self._bind()
        logger.info("scripted model listening at %s", self.base_url)
        try:
            self._uvicorn().run(sockets=[self._socket])
        finally:
            self._socket.close()
            self._socket = None

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
        if self._socket is None:
            raise RuntimeError("scripted model server is not running")
        return int(self._socket.getsockname()[1])

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

    def rule_uses(self) -> dict[str, int]:
        return self._state.engine.uses()

    def inject_failures(self, statuses: Iterable[int]) -> None:
        """Answer the next requests with these HTTP statuses, one each, in order."""
        self._state.faults.extend(statuses)

    def reset(self) -> None:
        """Forget recorded requests and rule usage; pending injected failures are kept."""
        self._state.log.clear()
        self._state.engine.reset()
