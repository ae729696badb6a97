"""One request's view of the forum: its database connection, signed-in member and response helpers."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..rendering import Renderer
from ..site import write_session_cookie
from .accounts import SESSION_COOKIE, Accounts
from .board import Board
from .models import Session, User

R = TypeVar("R", bound=Response)


@dataclass(frozen=True)
class ForumFrame:
    """What every page's header and footer need."""

    site_name: str
    user: User | None
    query: str = ""
    current_forum: str = ""
    # The page's own address, for "sign in and come back here" links.
    here: str = "/"


class Visit:
    def __init__(
        self,
        conn: sqlite3.Connection,
        renderer: Renderer,
        site_name: str,
        clock: Callable[[], datetime],
        cookie_token: str | None,
        here: str,
    ) -> None:
        self.conn = conn
        self.board = Board(conn)
        self.accounts = Accounts(conn)
        self._renderer = renderer
        self._site_name = site_name
        self._clock = clock
        self.here = here
        self.session: Session | None = self.accounts.session(cookie_token)
        self.user: User | None = self.accounts.user_by_id(self.session.user_id) if self.session else None
        self._new_token: str | None = None
        self._clear_cookie = cookie_token is not None and self.session is None

    def now(self) -> datetime:
        return self._clock()

    def sign_in(self, user: User) -> None:
        if self.session is not None:
            self.accounts.sign_out(self.session)
        self.session = self.accounts.sign_in(user, self.now())
        self.user = user
        self._new_token = self.session.token

    def sign_out(self) -> None:
        if self.session is not None:
            self.accounts.sign_out(self.session)
        self.session = None
        self.user = None
        self._clear_cookie = True

    def render(
        self, template: str, status_code: int = 200, query: str = "", current_forum: str = "", **context: Any
    ) -> HTMLResponse:
        frame = ForumFrame(self._site_name, self.user, query, current_forum, self.here)
        return self._finish(self._renderer.render(template, frame, status_code, **context))

    def not_found(self, message: str) -> HTMLResponse:
        return self.error_page(404, "Page not found", message)

    def forbidden(self, message: str) -> HTMLResponse:
        return self.error_page(403, "Not allowed", message)

    def error_page(self, status_code: int, heading: str, message: str) -> HTMLResponse:
        return self.render("error.html", status_code=status_code, heading=heading, message=message)

    def redirect(self, url: str) -> RedirectResponse:
        """303 so the browser follows a POST with a GET (post/redirect/get)."""
        return self._finish(RedirectResponse(url, status_code=303))

    def to_login(self, next_path: str) -> RedirectResponse:
        return self.redirect(f"/login?next={quote(next_path, safe='/')}")

    def _finish(self, response: R) -> R:
        write_session_cookie(response, SESSION_COOKIE, self._new_token, self._clear_cookie)
        return response
