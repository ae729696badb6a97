"""Typed, read-only questions about a shop's current state, for tests, demos and benchmark checkers.

Ask the database instead of hard-coding facts ("the cheapest book costs $8.49"): facts change with the seed and the
vocabulary, questions do not. Every call opens its own short connection, so it is safe while a server is running.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from . import database
from .accounts import Accounts
from .carts import Carts
from .catalog import Catalog, search_terms
from .models import CartLine, Category, Order, OrderLine, Product, User
from .orders import Orders

T = TypeVar("T")


class ShopQueries:
    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        conn = database.connect(self.db_path)
        try:
            yield conn
        finally:
            conn.close()

    def _read(self, question: Callable[[sqlite3.Connection], T]) -> T:
        with self._connection() as conn:
            return question(conn)

    # Catalog

    def product_count(self) -> int:
        return int(self._read(lambda c: c.execute("SELECT COUNT(*) FROM products").fetchone()[0]))

    def categories(self) -> tuple[Category, ...]:
        return self._read(lambda c: Catalog(c).categories())

    def product(self, product_id: int) -> Product:
        found = self._read(lambda c: Catalog(c).product(product_id))
        if found is None:
            raise LookupError(f"no product with id {product_id}")
        return found

    def product_by_name(self, name: str) -> Product:
        found = self._read(lambda c: Catalog(c).product_by_name(name))
        if found is None:
            raise LookupError(f"no product named {name!r}")
        return found

    def products_in_category(self, slug: str) -> tuple[Product, ...]:
        """Cheapest first; equal prices by name, then id (the shop's own tie-break)."""
        products = self._products("WHERE c.slug = ?", (slug,))
        return tuple(sorted(products, key=lambda p: (p.price_cents, p.name.lower(), p.id)))

    def cheapest_in_category(self, slug: str) -> Product:
        products = self.products_in_category(slug)
        if not products:
            raise LookupError(f"category {slug!r} has no products")
        return products[0]

    def products_matching(self, query: str) -> tuple[Product, ...]:
        """Products whose name, brand or description contains every word of `query` (case-insensitive)."""
        terms = [term.lower() for term in search_terms(query)]
        return tuple(
            product
            for product in self._products("", ())
            if terms and all(term in f"{product.name} {product.brand} {product.description}".lower() for term in terms)
        )

    def product_with_review_count(self, count: int) -> Product | None:
        """The lowest-id product with exactly `count` reviews, counted in the reviews table itself."""
        row = self._read(
            lambda c: c.execute(
                "SELECT p.id FROM products p LEFT JOIN reviews r ON r.product_id = p.id"
                " GROUP BY p.id HAVING COUNT(r.id) = ? ORDER BY p.id LIMIT 1",
                (count,),
            ).fetchone()
        )
        return self.product(row[0]) if row else None

    def product_with_sizes_and_colors(self) -> Product:
        """An in-stock product whose page offers both a size and a color choice."""
        for product in self._products("WHERE p.stock > 0", ()):
            if product.sizes and product.colors:
                return product
        raise LookupError("no in-stock product with sizes and colors")

    def review_count(self, product_id: int) -> int:
        return int(
            self._read(
                lambda c: c.execute("SELECT COUNT(*) FROM reviews WHERE product_id = ?", (product_id,)).fetchone()[0]
            )
        )

    def stock(self, product_id: int) -> int:
        return self.product(product_id).stock

    # People, carts and orders

    def user(self, email: str) -> User | None:
        row = self._read(lambda c: c.execute("SELECT id FROM users WHERE email = ?", (email,)).fetchone())
        return self._read(lambda c: Accounts(c).user(row[0])) if row else None

    def cart_lines(self, session_token: str) -> tuple[CartLine, ...]:
        """The cart behind a session cookie value (see `SESSION_COOKIE`); empty for unknown tokens."""

        def question(conn: sqlite3.Connection) -> tuple[CartLine, ...]:
            session = Accounts(conn).session(session_token)
            return Carts(conn).cart(session.id if session else None).lines

        return self._read(question)

    def order_count(self) -> int:
        return int(self._read(lambda c: c.execute("SELECT COUNT(*) FROM orders").fetchone()[0]))

    def orders_for(self, email: str) -> tuple[Order, ...]:
        """Orders placed by the account with this email, newest first."""
        user = self.user(email)
        return self._read(lambda c: Orders(c).for_user(user.id)) if user else ()

    def orders_with_contact_email(self, email: str) -> tuple[Order, ...]:
        """Orders whose checkout email matches, including guest orders."""
        return self._read(lambda c: Orders(c).for_email(email))

    def order(self, number: str) -> Order | None:
        return self._read(lambda c: Orders(c).by_number(number))

    def order_lines(self, number: str) -> tuple[OrderLine, ...]:
        order = self.order(number)
        return order.lines if order else ()

    def latest_order(self) -> Order | None:
        row = self._read(lambda c: c.execute("SELECT number FROM orders ORDER BY id DESC LIMIT 1").fetchone())
        return self.order(row[0]) if row else None

    def _products(self, where: str, params: tuple[object, ...]) -> tuple[Product, ...]:
        def question(conn: sqlite3.Connection) -> tuple[Product, ...]:
            ids = [
                row[0]
                for row in conn.execute(
                    f"SELECT p.id FROM products p JOIN categories c ON c.id = p.category_id {where} ORDER BY p.id",
                    params,
                )
            ]
            catalog = Catalog(conn)
            return tuple(product for product in (catalog.product(pid) for pid in ids) if product is not None)

        return self._read(question)
