"""The FastAPI application factory for the tracker."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import database
from . import routes_project, routes_site
from .config import TrackerConfig
from .seeding import create_tracker_database
from .web import SESSION_COOKIE, STATIC_DIR, TrackerContext, Visit, make_renderer

log = logging.getLogger(__name__)


def create_app(config: TrackerConfig, clock: Callable[[], datetime] = datetime.now) -> FastAPI:
    """Builds the tracker. With `config.reset` (the default) the database file is replaced by a freshly seeded one."""
    if config.reset or not config.db_path.exists():
        create_tracker_database(config.db_path, config.seed)
    ctx = TrackerContext(config=config, renderer=make_renderer(), clock=clock)

    app = FastAPI(title=config.site_name, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/healthz", response_class=PlainTextResponse)
    def healthz() -> str:
        return "ok"

    # Fixed paths first, then /{namespace}/{project}/..., and the catch-all /{username} last.
    app.include_router(routes_site.build_router(ctx))
    app.include_router(routes_project.build_router(ctx))
    app.include_router(routes_site.build_profile_router(ctx))

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, error: StarletteHTTPException) -> Response:
        if error.status_code != 404:
            return PlainTextResponse(str(error.detail), status_code=error.status_code, headers=error.headers)
        return _error_page(ctx, request, 404, "Page not found",
                           "The page could not be found or you don't have permission to view it.")

    @app.exception_handler(RequestValidationError)
    def bad_request(request: Request, error: RequestValidationError) -> Response:
        log.info("rejected %s %s: %s", request.method, request.url.path, error.errors())
        return _error_page(ctx, request, 400, "Something is wrong with that link",
                           "Check the address, or start again from the projects list.")

    return app


def _error_page(ctx: TrackerContext, request: Request, status_code: int, heading: str, message: str) -> Response:
    conn = database.connect(ctx.config.db_path)
    try:
        return Visit(conn, ctx, request.cookies.get(SESSION_COOKIE)).error_page(status_code, heading, message)
    finally:
        conn.close()
