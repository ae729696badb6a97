"""Web plumbing every sandbox site shares: the app itself (health check, static files, its routers), its own error
pages for errors raised before a route runs, and the session cookie written on the way out of a request."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

# A month, like a typical site's "remember me".
SESSION_MAX_AGE = 30 * 24 * 3600

ErrorPage = Callable[[Request, int, str, str], Response]


def new_site_app(title: str, static_dir: Path, routers: Sequence[APIRouter]) -> FastAPI:
    """A site's app: no API docs, its static files, /healthz, then its routers in the order given (a site with a
    catch-all path, like the tracker's /{username}, lists it last)."""
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=static_dir), name="static")

    @app.get("/healthz", response_class=PlainTextResponse)
    def healthz() -> str:
        return "ok"

    for router in routers:
        app.include_router(router)
    return app


def install_error_pages(app: FastAPI, error_page: ErrorPage, not_found: str, bad_link: str) -> None:
    """Unknown addresses and malformed parameters get the site's own page, with navigation, not bare JSON.

    `error_page(request, status_code, heading, message)` renders it; `not_found` and `bad_link` are the messages.
    """

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, error: StarletteHTTPException) -> Response:
        if error.status_code != 404:
            return PlainTextResponse(str(error.detail), status_code=error.status_code, headers=error.headers)
        return error_page(request, 404, "Page not found", not_found)

    @app.exception_handler(RequestValidationError)
    def bad_request(request: Request, error: RequestValidationError) -> Response:
        log.info("rejected %s %s: %s", request.method, request.url.path, error.errors())
        return error_page(request, 400, "Something is wrong with that link", bad_link)


def write_session_cookie(response: Response, name: str, new_token: str | None, clear: bool,
                         max_age: int = SESSION_MAX_AGE) -> None:
    """Sets a new session token, or clears a stale one; does nothing when neither applies."""
    if new_token is not None:
        response.set_cookie(name, new_token, max_age=max_age, httponly=True, samesite="lax", path="/")
    elif clear:
        response.delete_cookie(name, path="/", httponly=True, samesite="lax")
