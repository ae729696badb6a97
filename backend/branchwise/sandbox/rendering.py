"""Jinja2 environment and the display filters the templates share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from .countries import country_name
from .models import Category, User
from .pricing import format_price, shipping_method

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"


@dataclass(frozen=True)
class PageFrame:
    """What every page's header and footer need: navigation, who is signed in, how full the cart is."""

    store_name: str
    categories: tuple[Category, ...]
    user: User | None
    cart_count: int
    query: str = ""
    current_category: str = ""


def long_date(value: date | datetime) -> str:
    """ "March 9, 2025": unambiguous for people and for agents reading the page."""
    return f"{value:%B} {value.day}, {value.year}"


def full_stars(rating: float) -> int:
    return max(0, min(5, round(rating)))


def shipping_label(code: str) -> str:
    method = shipping_method(code)
    return method.label if method else code


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    return f"{count} {singular if count == 1 else (plural_form or singular + 's')}"


class Renderer:
    """The shop's templates by default; other sandbox sites pass their own folders (searched in order, so they
    can import the shop's macros) and extra filters."""

    def __init__(
        self,
        templates_dir: Path | Sequence[Path] = TEMPLATES_DIR,
        extra_filters: Mapping[str, Callable[..., Any]] | None = None,
    ) -> None:
        self._env = Environment(
            loader=FileSystemLoader(templates_dir),
            autoescape=select_autoescape(["html"]),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.filters.update(
            price=format_price,
            long_date=long_date,
            full_stars=full_stars,
            country_name=country_name,
            shipping_label=shipping_label,
            plural=plural,
        )
        self._env.filters.update(extra_filters or {})

    def render(self, template: str, frame: object, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = self._env.get_template(template).render(frame=frame, **context)
        return HTMLResponse(html, status_code=status_code)
