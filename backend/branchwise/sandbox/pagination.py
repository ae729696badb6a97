"""Links for a paged listing, built once in Python so templates only loop over them."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from .catalog import ProductPage


@dataclass(frozen=True)
class PageLink:
    number: int
    url: str
    current: bool


@dataclass(frozen=True)
class Pagination:
    links: tuple[PageLink, ...]
    previous_url: str | None
    next_url: str | None

    @property
    def needed(self) -> bool:
        return len(self.links) > 1


def paginate(path: str, params: tuple[tuple[str, str], ...], page: ProductPage) -> Pagination:
    """`params` are the listing's other query parameters (search text, sort) that every link keeps."""

    def url(number: int) -> str:
        query = [(key, value) for key, value in params if value]
        if number > 1:
            query.append(("page", str(number)))
        return f"{path}?{urlencode(query)}" if query else path

    links = tuple(PageLink(n, url(n), n == page.page) for n in range(1, page.page_count + 1))
    return Pagination(
        links=links,
        previous_url=url(page.page - 1) if page.has_previous else None,
        next_url=url(page.page + 1) if page.has_next else None,
    )
