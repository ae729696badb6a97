"""Shared per-app wiring handed to every router."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from fastapi import Request

from .. import database
from ..rendering import Renderer
from .accounts import SESSION_COOKIE
from .config import ForumConfig
from .visit import Visit


@dataclass(frozen=True)
class ForumContext:
    config: ForumConfig
    renderer: Renderer
    clock: Callable[[], datetime]

    def visit(self, request: Request) -> Iterator[Visit]:
        """FastAPI dependency: a connection per request, closed when the response is done."""
        conn = database.connect(self.config.db_path)
        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        try:
            yield Visit(conn, self.renderer, self.config.site_name, self.clock, request.cookies.get(SESSION_COOKIE),
                        here)
        finally:
            conn.close()
