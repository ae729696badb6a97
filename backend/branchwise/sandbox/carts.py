"""The shopping cart: one per session, lines keyed by product and chosen options."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from enum import Enum

from .database import transaction
from .models import Cart, CartLine, Product

MAX_LINE_QUANTITY = 99


class CartError(ValueError):
    """A request the shopper can fix; the message is shown to them as is."""


class QuantityChange(Enum):
    UPDATED = "updated"
    REMOVED = "removed"
    # Asked for more than is in stock; the line now holds all that is available.
    LIMITED = "limited"
    NOT_FOUND = "not-found"


@dataclass(frozen=True)
class AddedToCart:
    line_id: int
    quantity: int
    limited: bool


class Carts:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def cart(self, session_id: int | None) -> Cart:
        if session_id is None:
            return Cart(())
        rows = self._conn.execute(
            "SELECT l.id, l.product_id, p.name AS product_name, p.sku, l.size, l.color,"
            " p.price_cents AS unit_price_cents, l.quantity, p.stock"
            " FROM cart_lines l JOIN products p ON p.id = l.product_id WHERE l.session_id = ? ORDER BY l.id",
            (session_id,),
        )
        return Cart(tuple(CartLine(**dict(row)) for row in rows))

    def add(self, session_id: int, product: Product, size: str, color: str, quantity: int) -> AddedToCart:
        _check_choice("size", size, product.sizes)
        _check_choice("color", color, product.colors)
        if not 1 <= quantity <= MAX_LINE_QUANTITY:
            raise CartError(f"Enter a quantity between 1 and {MAX_LINE_QUANTITY}.")
        if not product.in_stock:
            raise CartError("Sorry, this item is out of stock.")
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT id, quantity FROM cart_lines"
                " WHERE session_id = ? AND product_id = ? AND size = ? AND color = ?",
                (session_id, product.id, size, color),
            ).fetchone()
            already = row["quantity"] if row else 0
            if already >= product.stock:
                raise CartError(f"Your cart already holds all {product.stock} available.")
            wanted = min(already + quantity, product.stock, MAX_LINE_QUANTITY)
            if row:
                self._conn.execute("UPDATE cart_lines SET quantity = ? WHERE id = ?", (wanted, row["id"]))
                line_id = int(row["id"])
            else:
                cursor = self._conn.execute(
                    "INSERT INTO cart_lines (session_id, product_id, size, color, quantity) VALUES (?, ?, ?, ?, ?)",
                    (session_id, product.id, size, color, wanted),
                )
                line_id = int(cursor.lastrowid or 0)
        return AddedToCart(line_id, wanted, limited=wanted < already + quantity)

    def set_quantity(self, session_id: int, line_id: int, quantity: int) -> QuantityChange:
        if quantity <= 0:
            return QuantityChange.REMOVED if self.remove(session_id, line_id) else QuantityChange.NOT_FOUND
        with transaction(self._conn):
            row = self._conn.execute(
                "SELECT p.stock FROM cart_lines l JOIN products p ON p.id = l.product_id"
                " WHERE l.id = ? AND l.session_id = ?",
                (line_id, session_id),
            ).fetchone()
            if row is None:
                return QuantityChange.NOT_FOUND
            allowed = min(quantity, row["stock"], MAX_LINE_QUANTITY)
            if allowed <= 0:
                self._conn.execute("DELETE FROM cart_lines WHERE id = ?", (line_id,))
                return QuantityChange.REMOVED
            self._conn.execute("UPDATE cart_lines SET quantity = ? WHERE id = ?", (allowed, line_id))
        return QuantityChange.LIMITED if allowed < quantity else QuantityChange.UPDATED

    def remove(self, session_id: int, line_id: int) -> bool:
        cursor = self._conn.execute("DELETE FROM cart_lines WHERE id = ? AND session_id = ?", (line_id, session_id))
        return cursor.rowcount > 0


def _check_choice(kind: str, value: str, allowed: tuple[str, ...]) -> None:
    if allowed and not value:
        raise CartError(f"Please choose a {kind}.")
    if value and value not in allowed:
        raise CartError(f"That {kind} is not available for this product.")
