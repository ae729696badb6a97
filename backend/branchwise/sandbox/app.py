"""The FastAPI application factory."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from fastapi import FastAPI, Request
from fastapi.responses import Response

from . import database, routes_account, routes_cart, routes_catalog, routes_checkout, routes_deals
from .accounts import SESSION_COOKIE
from .config import ShopConfig
from .context import ShopContext
from .rendering import STATIC_DIR, Renderer
from .seeding import create_shop_database
from .site import install_error_pages, new_site_app
from .visit import Visit


def create_app(config: ShopConfig, clock: Callable[[], datetime] = datetime.now) -> FastAPI:
    """Builds the shop. With `config.reset` (the default) the database file is replaced by a freshly seeded one.

    `clock` lets tests pin "now" (order timestamps, card expiry checks).
    """
    if config.reset or not config.db_path.exists():
        create_shop_database(config.db_path, config.seed)
    ctx = ShopContext(config=config, renderer=Renderer(), clock=clock)

    app = new_site_app(config.store_name, STATIC_DIR, [module.build_router(ctx) for module in (
        routes_catalog, routes_deals, routes_cart, routes_checkout, routes_account)])
    install_error_pages(
        app,
        lambda request, status_code, heading, message: _error_page(ctx, request, status_code, heading, message),
        not_found="We could not find that page.",
        bad_link="Check the address, or start again from the home page.",
    )

    return app


def _error_page(ctx: ShopContext, request: Request, status_code: int, heading: str, message: str) -> Response:
    """Errors raised before a route runs still get the shop's own page, with navigation, not bare JSON."""
    conn = database.connect(ctx.config.db_path)
    try:
        visit = Visit(conn, ctx.renderer, ctx.config.store_name, ctx.clock, request.cookies.get(SESSION_COOKIE))
        return visit.error_page(status_code, heading, message)
    finally:
        conn.close()
