"""Shared per-app wiring handed to every router: immutable, except the in-memory deals rotation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from fastapi import Request

from . import database
from .accounts import SESSION_COOKIE
from .config import ShopConfig
from .deals import DealRotation
from .rendering import Renderer
from .visit import Visit


@dataclass(frozen=True)
class ShopContext:
    config: ShopConfig
    renderer: Renderer
    clock: Callable[[], datetime]
    # Which "Deals of the moment" page comes next; memory only, so GET /deals never writes to the database.
    deals: DealRotation = field(default_factory=DealRotation)

    def visit(self, request: Request) -> Iterator[Visit]:
        """FastAPI dependency: a connection per request, closed when the response is done."""
        conn = database.connect(self.config.db_path)
        try:
            yield Visit(conn, self.renderer, self.config.store_name, self.clock, request.cookies.get(SESSION_COOKIE))
        finally:
            conn.close()
