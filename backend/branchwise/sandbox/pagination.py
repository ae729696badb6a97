"""Links for a paged listing, built once in Python so templates only loop over them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlencode


class Paged(Protocol):
    """One page of any listing (the shop's ProductPage, the tracker's ListPage)."""

    @property
    def page(self) -> int: ...

    @property
    def page_count(self) -> int: ...

    @property
    def has_previous(self) -> bool: ...

    @property
    def has_next(self) -> bool: ...


class PageNumbers:
    """Page arithmetic for a listing's page record (a frozen dataclass with these three fields and `shown`)."""

    total: int
    page: int
    page_size: int

    @property
    def shown(self) -> int:
        """How many rows this page holds."""
        raise NotImplementedError

    @property
    def page_count(self) -> int:
        return max(1, math.ceil(self.total / self.page_size))

    @property
    def first_index(self) -> int:
        """1-based position of the first row shown ("Showing 13–24 of 30")."""
        return 0 if self.total == 0 else (self.page - 1) * self.page_size + 1

    @property
    def last_index(self) -> int:
        return (self.page - 1) * self.page_size + self.shown

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.page_count


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


def paginate(path: str, params: tuple[tuple[str, str], ...], page: Paged) -> Pagination:
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
