"""Placing orders (stock and cart change atomically) and reading order history."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING

from .database import transaction
from .models import Order, OrderLine, Session

if TYPE_CHECKING:
    from .checkout import OrderRequest

ORDER_NUMBER_BASE = 100100
INITIAL_STATUS = "Processing"


def order_number(order_id: int) -> str:
    return f"BW-{ORDER_NUMBER_BASE + order_id}"


class EmptyCartError(Exception):
    pass


class OutOfStockError(Exception):
    def __init__(self, product_names: tuple[str, ...]) -> None:
        super().__init__(", ".join(product_names))
        self.product_names = product_names


_ORDER_COLUMNS = """
    id, number, user_id, session_id, placed_at, status, full_name, email, address, city, zip_code, country,
    shipping_method, card_brand, card_last4, subtotal_cents, shipping_cents, total_cents
"""


class Orders:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def place(self, session: Session, request: OrderRequest, now: datetime) -> Order:
        """Turns the session's cart into an order, decreasing stock; all or nothing."""
        with transaction(self._conn):
            lines = self._conn.execute(
                "SELECT l.product_id, p.name, p.sku, l.size, l.color, p.price_cents, l.quantity, p.stock"
                " FROM cart_lines l JOIN products p ON p.id = l.product_id WHERE l.session_id = ? ORDER BY l.id",
                (session.id,),
            ).fetchall()
            if not lines:
                raise EmptyCartError()
            short = tuple(line["name"] for line in lines if line["quantity"] > line["stock"])
            if short:
                raise OutOfStockError(short)
            subtotal = sum(line["price_cents"] * line["quantity"] for line in lines)
            shipping = request.shipping.cost_for(subtotal)
            cursor = self._conn.execute(
                "INSERT INTO orders (number, user_id, session_id, placed_at, status, full_name, email, address, city,"
                " zip_code, country, shipping_method, card_brand, card_last4, subtotal_cents, shipping_cents,"
                " total_cents) VALUES ('', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session.user_id, session.id, now.isoformat(timespec="seconds"), INITIAL_STATUS, request.full_name,
                 request.email, request.address, request.city, request.zip_code, request.country,
                 request.shipping.code, request.card.brand, request.card.last4, subtotal, shipping,
                 subtotal + shipping),
            )
            order_id = int(cursor.lastrowid or 0)
            number = order_number(order_id)
            self._conn.execute("UPDATE orders SET number = ? WHERE id = ?", (number, order_id))
            for line in lines:
                self._conn.execute(
                    "INSERT INTO order_lines (order_id, product_id, product_name, sku, size, color, unit_price_cents,"
                    " quantity) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (order_id, line["product_id"], line["name"], line["sku"], line["size"], line["color"],
                     line["price_cents"], line["quantity"]),
                )
                self._conn.execute(
                    "UPDATE products SET stock = stock - ? WHERE id = ?", (line["quantity"], line["product_id"])
                )
            self._conn.execute("DELETE FROM cart_lines WHERE session_id = ?", (session.id,))
        order = self.by_number(number)
        if order is None:
            raise RuntimeError(f"order {number} vanished right after it was placed")
        return order

    def for_user(self, user_id: int) -> tuple[Order, ...]:
        rows = self._conn.execute(
            f"SELECT {_ORDER_COLUMNS} FROM orders WHERE user_id = ? ORDER BY placed_at DESC, id DESC", (user_id,)
        ).fetchall()
        return tuple(self._order(row) for row in rows)

    def for_email(self, email: str) -> tuple[Order, ...]:
        rows = self._conn.execute(
            f"SELECT {_ORDER_COLUMNS} FROM orders WHERE email = ? COLLATE NOCASE ORDER BY placed_at DESC, id DESC",
            (email,),
        ).fetchall()
        return tuple(self._order(row) for row in rows)

    def by_number(self, number: str) -> Order | None:
        row = self._conn.execute(f"SELECT {_ORDER_COLUMNS} FROM orders WHERE number = ?", (number,)).fetchone()
        return self._order(row) if row else None

    def _order(self, row: sqlite3.Row) -> Order:
        lines = self._conn.execute(
            "SELECT product_id, product_name, sku, size, color, unit_price_cents, quantity FROM order_lines"
            " WHERE order_id = ? ORDER BY id",
            (row["id"],),
        )
        fields = dict(row)
        fields["placed_at"] = datetime.fromisoformat(fields["placed_at"])
        return Order(**fields, lines=tuple(OrderLine(**dict(line)) for line in lines))
