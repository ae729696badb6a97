"""Per-app wiring and one request's view of the tracker: connection, signed-in user, rendering, cookies."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .. import database
from ..rendering import TEMPLATES_DIR as SHOP_TEMPLATES_DIR
from ..rendering import Renderer, long_date
from ..site import write_session_cookie
from .actions import Actions
from .config import TrackerConfig
from .models import Project, User
from .schema import role_name
from .store import Store

SESSION_COOKIE = "_gitlab_session"
SESSION_MAX_AGE = 7 * 24 * 3600
TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"
R = TypeVar("R", bound=Response)


def date_text(value: str | None) -> str:
    """ISO text from the database as "March 9, 2025" (empty for None)."""
    return long_date(datetime.fromisoformat(value)) if value else ""


def make_renderer() -> Renderer:
    """Tracker templates first; the shop's folder after them lends its `pager` macro from macros.html."""
    return Renderer((TEMPLATES_DIR, SHOP_TEMPLATES_DIR), {"date_text": date_text, "role_name": role_name})


@dataclass(frozen=True)
class Frame:
    """What every page's header needs; `project` adds the project's own navigation."""

    site_name: str
    user: User | None
    search: str = ""
    project: Project | None = None
    section: str = ""


@dataclass(frozen=True)
class TrackerContext:
    config: TrackerConfig
    renderer: Renderer
    clock: Callable[[], datetime]

    def visit(self, request: Request) -> Iterator[Visit]:
        """FastAPI dependency: a connection per request, closed when the response is done."""
        conn = database.connect(self.config.db_path)
        try:
            yield Visit(conn, self, request.cookies.get(SESSION_COOKIE))
        finally:
            conn.close()


class Visit:
    def __init__(self, conn: sqlite3.Connection, ctx: TrackerContext, token: str | None) -> None:
        self.conn = conn
        self.store = Store(conn)
        self.ctx = ctx
        session = self.store.session(token)
        self.token = session.token if session else None
        self.user: User | None = self.store.user(session.user_id) if session else None
        self._new_token: str | None = None
        self._clear_cookie = token is not None and session is None

    @property
    def viewer(self) -> int | None:
        return self.user.id if self.user else None

    def actions(self) -> Actions:
        return Actions(self.conn, self.ctx.clock())

    def sign_in(self, user: User) -> None:
        self._new_token = self.actions().sign_in(user)
        self.user = user

    def sign_out(self) -> None:
        if self.token is not None:
            self.actions().sign_out(self.token)
        self.user = None
        self._clear_cookie = True

    def render(
        self, template: str, status_code: int = 200, search: str = "", project: Project | None = None,
        section: str = "", **context: Any,
    ) -> HTMLResponse:
        frame = Frame(self.ctx.config.site_name, self.user, search, project, section)
        return self._finish(self.ctx.renderer.render(template, frame, status_code, project=project, **context))

    def not_found(self, message: str = "The page could not be found or you don't have permission to view it.") -> \
            HTMLResponse:
        return self.error_page(404, "Page not found", message)

    def error_page(self, status_code: int, heading: str, message: str) -> HTMLResponse:
        return self.render("error.html", status_code=status_code, heading=heading, message=message)

    def redirect(self, url: str) -> RedirectResponse:
        """303 so the browser follows a POST with a GET (post/redirect/get)."""
        return self._finish(RedirectResponse(url, status_code=303))

    def to_sign_in(self, path: str) -> RedirectResponse:
        return self.redirect(f"/users/sign_in?redirect_to={quote(path, safe='/')}")

    def _finish(self, response: R) -> R:
        write_session_cookie(response, SESSION_COOKIE, self._new_token, self._clear_cookie, max_age=SESSION_MAX_AGE)
        return response
