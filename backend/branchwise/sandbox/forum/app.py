"""The forum's FastAPI application factory."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response

from ..rendering import Renderer
from ..site import install_error_pages, new_site_app
from . import routes_account, routes_browse, routes_write
from .config import ForumConfig
from .context import ForumContext
from .seeding import create_forum_database

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"


def relative_time(value: datetime, now: datetime) -> str:
    """ "3 hours ago", as forums show it; the exact time goes in a <time datetime> attribute beside it."""
    seconds = max(0, int((now - value).total_seconds()))
    for unit, size in (("year", 365 * 86400), ("month", 30 * 86400), ("day", 86400), ("hour", 3600),
                       ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'} ago"
    return "just now"


def create_app(config: ForumConfig, clock: Callable[[], datetime] = datetime.now) -> FastAPI:
    """Builds the forum. With `config.reset` (the default) the database file is replaced by a freshly seeded one.

    `clock` lets tests pin "now" (post and comment timestamps, "3 hours ago").
    """
    if config.reset or not config.db_path.exists():
        create_forum_database(config.db_path, config.seed)
    renderer = Renderer(TEMPLATES_DIR, {"ago": lambda value: relative_time(value, clock())})
    ctx = ForumContext(config=config, renderer=renderer, clock=clock)

    app = new_site_app(config.site_name, STATIC_DIR,
                       [module.build_router(ctx) for module in (routes_browse, routes_write, routes_account)])
    install_error_pages(
        app,
        lambda request, status_code, heading, message: _error_page(ctx, request, status_code, heading, message),
        not_found="We could not find that page.",
        bad_link="Check the address, or start again from the front page.",
    )

    return app


def _error_page(ctx: ForumContext, request: Request, status_code: int, heading: str, message: str) -> Response:
    """Errors raised before a route runs still get the forum's own page, with navigation, not bare JSON."""
    with contextmanager(ctx.visit)(request) as visit:
        return visit.error_page(status_code, heading, message)
