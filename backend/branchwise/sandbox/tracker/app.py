"""The FastAPI application factory for the tracker."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from fastapi import FastAPI, Request
from fastapi.responses import Response

from .. import database
from ..site import install_error_pages, new_site_app
from . import routes_project, routes_site
from .config import TrackerConfig
from .seeding import create_tracker_database
from .web import SESSION_COOKIE, STATIC_DIR, TrackerContext, Visit, make_renderer


def create_app(config: TrackerConfig, clock: Callable[[], datetime] = datetime.now) -> FastAPI:
    """Builds the tracker. With `config.reset` (the default) the database file is replaced by a freshly seeded one."""
    if config.reset or not config.db_path.exists():
        create_tracker_database(config.db_path, config.seed)
    ctx = TrackerContext(config=config, renderer=make_renderer(), clock=clock)

    # Fixed paths first, then /{namespace}/{project}/..., and the catch-all /{username} last.
    app = new_site_app(config.site_name, STATIC_DIR, [routes_site.build_router(ctx), routes_project.build_router(ctx),
                                                      routes_site.build_profile_router(ctx)])
    install_error_pages(
        app,
        lambda request, status_code, heading, message: _error_page(ctx, request, status_code, heading, message),
        not_found="The page could not be found or you don't have permission to view it.",
        bad_link="Check the address, or start again from the projects list.",
    )
    return app


def _error_page(ctx: TrackerContext, request: Request, status_code: int, heading: str, message: str) -> Response:
    conn = database.connect(ctx.config.db_path)
    try:
        return Visit(conn, ctx, request.cookies.get(SESSION_COOKIE)).error_page(status_code, heading, message)
    finally:
        conn.close()
