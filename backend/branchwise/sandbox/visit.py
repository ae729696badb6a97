"""One request's view of the shop: its database connection, session, signed-in user and response helpers."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from fastapi.responses import HTMLResponse, RedirectResponse, Response

from .accounts import SESSION_COOKIE, Accounts
from .carts import Carts
from .catalog import Catalog
from .models import Session, User
from .orders import Orders
from .rendering import PageFrame, Renderer
from .site import SESSION_MAX_AGE as SESSION_MAX_AGE  # re-exported: it used to live here
from .site import write_session_cookie

R = TypeVar("R", bound=Response)


class Visit:
    def __init__(
        self,
        conn: sqlite3.Connection,
        renderer: Renderer,
        store_name: str,
        clock: Callable[[], datetime],
        cookie_token: str | None,
    ) -> None:
        self.conn = conn
        self.catalog = Catalog(conn)
        self.accounts = Accounts(conn)
        self.carts = Carts(conn)
        self.orders = Orders(conn)
        self._renderer = renderer
        self._store_name = store_name
        self._clock = clock
        self.session: Session | None = self.accounts.session(cookie_token)
        self.user: User | None = self.accounts.user(self.session.user_id if self.session else None)
        # Cookie work to do on the way out: a new token to set, or the old one to clear.
        self._new_token: str | None = None
        self._clear_cookie = cookie_token is not None and self.session is None

    def now(self) -> datetime:
        return self._clock()

    def ensure_session(self) -> Session:
        """Only POST handlers call this, so browsing alone never creates server state."""
        if self.session is None:
            self.session = self.accounts.start_session(self.now())
            self._new_token = self.session.token
        return self.session

    def sign_in(self, user: User) -> None:
        self.session = self.accounts.sign_in(self.session, user, self.now())
        self.user = user
        self._new_token = self.session.token

    def sign_out(self) -> None:
        if self.session is not None:
            self.accounts.sign_out(self.session)
        self.session = None
        self.user = None
        self._new_token = None
        self._clear_cookie = True

    def frame(self, query: str = "", current_category: str = "") -> PageFrame:
        cart = self.carts.cart(self.session.id if self.session else None)
        return PageFrame(
            store_name=self._store_name,
            categories=self.catalog.categories(),
            user=self.user,
            cart_count=cart.item_count,
            query=query,
            current_category=current_category,
        )

    def render(
        self,
        template: str,
        status_code: int = 200,
        query: str = "",
        current_category: str = "",
        **context: Any,
    ) -> HTMLResponse:
        frame = self.frame(query=query, current_category=current_category)
        return self._finish(self._renderer.render(template, frame, status_code, **context))

    def not_found(self, message: str) -> HTMLResponse:
        return self.error_page(404, "Page not found", message)

    def error_page(self, status_code: int, heading: str, message: str) -> HTMLResponse:
        return self.render("error.html", status_code=status_code, heading=heading, message=message)

    def redirect(self, url: str) -> RedirectResponse:
        """303 so the browser follows a POST with a GET (post/redirect/get)."""
        return self._finish(RedirectResponse(url, status_code=303))

    def _finish(self, response: R) -> R:
        write_session_cookie(response, SESSION_COOKIE, self._new_token, self._clear_cookie)
        return response
