"""The FastAPI application factory."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import database, routes_account, routes_cart, routes_catalog, routes_checkout, routes_deals
from .accounts import SESSION_COOKIE
from .config import ShopConfig
from .context import ShopContext
from .rendering import STATIC_DIR, Renderer
from .seeding import create_shop_database
from .visit import Visit

log = logging.getLogger(__name__)


def create_app(config: ShopConfig, clock: Callable[[], datetime] = datetime.now) -> FastAPI:
    """Builds the shop. With `config.reset` (the default) the database file is replaced by a freshly seeded one.

    `clock` lets tests pin "now" (order timestamps, card expiry checks).
    """
    if config.reset or not config.db_path.exists():
        create_shop_database(config.db_path, config.seed)
    ctx = ShopContext(config=config, renderer=Renderer(), clock=clock)

    app = FastAPI(title=config.store_name, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for module in (routes_catalog, routes_deals, routes_cart, routes_checkout, routes_account):
        app.include_router(module.build_router(ctx))

    @app.get("/healthz", response_class=PlainTextResponse)
    def healthz() -> str:
        return "ok"

    @app.exception_handler(StarletteHTTPException)
    def http_error(request: Request, error: StarletteHTTPException) -> Response:
        if error.status_code != 404:
            return PlainTextResponse(str(error.detail), status_code=error.status_code, headers=error.headers)
        return _error_page(ctx, request, 404, "Page not found", "We could not find that page.")

    @app.exception_handler(RequestValidationError)
    def bad_request(request: Request, error: RequestValidationError) -> Response:
        log.info("rejected %s %s: %s", request.method, request.url.path, error.errors())
        message = "Check the address, or start again from the home page."
        return _error_page(ctx, request, 400, "Something is wrong with that link", message)

    return app


def _error_page(ctx: ShopContext, request: Request, status_code: int, heading: str, message: str) -> Response:
    """Errors raised before a route runs still get the shop's own page, with navigation, not bare JSON."""
    conn = database.connect(ctx.config.db_path)
    try:
        visit = Visit(conn, ctx.renderer, ctx.config.store_name, ctx.clock, request.cookies.get(SESSION_COOKIE))
        return visit.error_page(status_code, heading, message)
    finally:
        conn.close()
