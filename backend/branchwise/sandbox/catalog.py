"""Read access to categories, products and reviews: listings, sorting, paging and search."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import Enum
from types import MappingProxyType

from .models import Category, Product, Review
from .pagination import PageNumbers


class SortOrder(str, Enum):
    FEATURED = "featured"
    PRICE_ASC = "price-asc"
    PRICE_DESC = "price-desc"
    RATING = "rating"
    NAME = "name"

    @property
    def label(self) -> str:
        return _SORT_LABELS[self]

    @classmethod
    def parse(cls, value: str | None) -> SortOrder:
        """Unknown values fall back to the default instead of failing: URLs get hand-edited."""
        try:
            return cls(value) if value else cls.FEATURED
        except ValueError:
            return cls.FEATURED


_SORT_LABELS = MappingProxyType({
    SortOrder.FEATURED: "Featured",
    SortOrder.PRICE_ASC: "Price: low to high",
    SortOrder.PRICE_DESC: "Price: high to low",
    SortOrder.RATING: "Customer rating",
    SortOrder.NAME: "Name: A to Z",
})

# Every order ends in unique columns so paging never shows a product twice or skips one.
_ORDER_BY = MappingProxyType({
    SortOrder.FEATURED: "p.featured DESC, p.review_count DESC, p.id",
    SortOrder.PRICE_ASC: "p.price_cents ASC, p.name COLLATE NOCASE, p.id",
    SortOrder.PRICE_DESC: "p.price_cents DESC, p.name COLLATE NOCASE, p.id",
    SortOrder.RATING: "p.rating DESC, p.review_count DESC, p.name COLLATE NOCASE, p.id",
    SortOrder.NAME: "p.name COLLATE NOCASE, p.id",
})

_PRODUCT_COLUMNS = """
    p.id, c.slug AS category_slug, c.name AS category_name, c.brand_label, p.sku, p.name, p.brand, p.description,
    p.price_cents, p.stock, p.rating, p.review_count
"""
_PRODUCT_FROM = "FROM products p JOIN categories c ON c.id = p.category_id"


@dataclass(frozen=True)
class ProductPage(PageNumbers):
    products: tuple[Product, ...]
    total: int
    page: int
    page_size: int

    @property
    def shown(self) -> int:
        return len(self.products)


def search_terms(query: str) -> tuple[str, ...]:
    return tuple(term for term in query.split() if term)


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class Catalog:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def categories(self) -> tuple[Category, ...]:
        rows = self._conn.execute("SELECT id, slug, name, blurb, brand_label FROM categories ORDER BY id")
        return tuple(Category(**dict(row)) for row in rows)

    def category(self, slug: str) -> Category | None:
        row = self._conn.execute(
            "SELECT id, slug, name, blurb, brand_label FROM categories WHERE slug = ?", (slug,)
        ).fetchone()
        return Category(**dict(row)) if row else None

    def product(self, product_id: int) -> Product | None:
        rows = self._conn.execute(f"SELECT {_PRODUCT_COLUMNS} {_PRODUCT_FROM} WHERE p.id = ?", (product_id,))
        products = self._hydrate(rows.fetchall())
        return products[0] if products else None

    def product_by_name(self, name: str) -> Product | None:
        rows = self._conn.execute(f"SELECT {_PRODUCT_COLUMNS} {_PRODUCT_FROM} WHERE p.name = ?", (name,))
        products = self._hydrate(rows.fetchall())
        return products[0] if products else None

    def products(self, product_ids: Sequence[int]) -> tuple[Product, ...]:
        """The products with these ids, in the order given; unknown ids are left out."""
        if not product_ids:
            return ()
        placeholders = ",".join("?" for _ in product_ids)
        rows = self._conn.execute(f"SELECT {_PRODUCT_COLUMNS} {_PRODUCT_FROM} WHERE p.id IN ({placeholders})",
                                  list(product_ids))
        by_id = {product.id: product for product in self._hydrate(rows.fetchall())}
        return tuple(by_id[pid] for pid in product_ids if pid in by_id)

    def stock_levels(self) -> dict[int, int]:
        """Stock of every product, by id."""
        return {row["id"]: row["stock"] for row in self._conn.execute("SELECT id, stock FROM products ORDER BY id")}

    def category_page(self, slug: str, sort: SortOrder, page: int, page_size: int) -> ProductPage:
        return self._page("c.slug = ?", [slug], _ORDER_BY[sort], page, page_size)

    def search_page(self, query: str, sort: SortOrder, page: int, page_size: int) -> ProductPage:
        terms = search_terms(query)
        if not terms:
            return ProductPage((), 0, 1, page_size)
        # Every term must appear in the name, brand or description.
        where = " AND ".join(
            "(p.name LIKE ? ESCAPE '\\' OR p.brand LIKE ? ESCAPE '\\' OR p.description LIKE ? ESCAPE '\\')"
            for _ in terms
        )
        params: list[object] = [_like_pattern(term) for term in terms for _ in range(3)]
        order = _ORDER_BY[sort]
        if sort is SortOrder.FEATURED:
            # "Best match": products whose name contains the whole query come first.
            order = f"(p.name LIKE ? ESCAPE '\\') DESC, {order}"
            return self._page(where, params, order, page, page_size, [_like_pattern(" ".join(terms))])
        return self._page(where, params, order, page, page_size)

    def featured(self, limit: int) -> tuple[Product, ...]:
        rows = self._conn.execute(
            f"SELECT {_PRODUCT_COLUMNS} {_PRODUCT_FROM} WHERE p.featured = 1 ORDER BY p.id LIMIT ?", (limit,)
        )
        return self._hydrate(rows.fetchall())

    def top_rated(self, limit: int, min_reviews: int) -> tuple[Product, ...]:
        rows = self._conn.execute(
            f"SELECT {_PRODUCT_COLUMNS} {_PRODUCT_FROM} WHERE p.review_count >= ? AND p.stock > 0"
            f" ORDER BY {_ORDER_BY[SortOrder.RATING]} LIMIT ?",
            (min_reviews, limit),
        )
        return self._hydrate(rows.fetchall())

    def reviews(self, product_id: int) -> tuple[Review, ...]:
        rows = self._conn.execute(
            "SELECT id, product_id, author, rating, title, body, created_on FROM reviews"
            " WHERE product_id = ? ORDER BY created_on DESC, id DESC",
            (product_id,),
        )
        return tuple(
            Review(
                id=row["id"],
                product_id=row["product_id"],
                author=row["author"],
                rating=row["rating"],
                title=row["title"],
                body=row["body"],
                created_on=date.fromisoformat(row["created_on"]),
            )
            for row in rows
        )

    def _page(
        self,
        where: str,
        params: Sequence[object],
        order: str,
        page: int,
        page_size: int,
        order_params: Sequence[object] = (),
    ) -> ProductPage:
        total = self._conn.execute(f"SELECT COUNT(*) {_PRODUCT_FROM} WHERE {where}", params).fetchone()[0]
        page_count = max(1, math.ceil(total / page_size))
        page = min(max(1, page), page_count)
        rows = self._conn.execute(
            f"SELECT {_PRODUCT_COLUMNS} {_PRODUCT_FROM} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*params, *order_params, page_size, (page - 1) * page_size],
        )
        return ProductPage(self._hydrate(rows.fetchall()), total, page, page_size)

    def _hydrate(self, rows: list[sqlite3.Row]) -> tuple[Product, ...]:
        """Attaches size and color options with one extra query for the whole batch."""
        if not rows:
            return ()
        ids = [row["id"] for row in rows]
        placeholders = ",".join("?" for _ in ids)
        options: dict[tuple[int, str], list[str]] = {}
        for option in self._conn.execute(
            f"SELECT product_id, kind, value FROM product_options WHERE product_id IN ({placeholders})"
            " ORDER BY product_id, kind, position",
            ids,
        ):
            options.setdefault((option["product_id"], option["kind"]), []).append(option["value"])
        return tuple(
            Product(
                **dict(row),
                sizes=tuple(options.get((row["id"], "size"), ())),
                colors=tuple(options.get((row["id"], "color"), ())),
            )
            for row in rows
        )
