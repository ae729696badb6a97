"""Creates a fresh shop database file and fills it from the deterministic generator."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from . import database
from .generator import SeedData, generate

log = logging.getLogger(__name__)


def create_shop_database(path: Path, seed: int) -> SeedData:
    """Replaces any file at `path` with a newly seeded shop and returns what was written."""
    data = generate(seed)
    database.create_fresh(path, database.SCHEMA, lambda conn: _write(conn, data))
    log.info("seeded shop database %s (seed %d, %d products)", path, seed, len(data.products))
    return data


def _write(conn: sqlite3.Connection, data: SeedData) -> None:
    conn.executemany(
        "INSERT INTO categories (id, slug, name, blurb, brand_label) VALUES (?, ?, ?, ?, ?)",
        [(c.id, c.slug, c.name, c.blurb, c.brand_label) for c in data.categories],
    )
    category_ids = {category.slug: category.id for category in data.categories}
    conn.executemany(
        "INSERT INTO products (id, category_id, sku, name, brand, description, price_cents, stock, rating,"
        " review_count, featured) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (p.id, category_ids[p.category_slug], p.sku, p.name, p.brand, p.description, p.price_cents, p.stock,
             p.rating, p.review_count, int(p.id in data.featured_product_ids))
            for p in data.products
        ],
    )
    conn.executemany(
        "INSERT INTO product_options (product_id, kind, value, position) VALUES (?, ?, ?, ?)",
        [
            (p.id, kind, value, position)
            for p in data.products
            for kind, values in (("size", p.sizes), ("color", p.colors))
            for position, value in enumerate(values)
        ],
    )
    conn.executemany(
        "INSERT INTO reviews (id, product_id, author, rating, title, body, created_on) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(r.id, r.product_id, r.author, r.rating, r.title, r.body, r.created_on.isoformat()) for r in data.reviews],
    )
    conn.executemany(
        "INSERT INTO users (id, email, name, password_hash, address, city, zip_code, country)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (s.user.id, s.user.email, s.user.name, s.password_hash, s.user.address, s.user.city, s.user.zip_code,
             s.user.country)
            for s in data.users
        ],
    )
    for order in data.orders:
        conn.execute(
            "INSERT INTO orders (id, number, user_id, session_id, placed_at, status, full_name, email, address, city,"
            " zip_code, country, shipping_method, card_brand, card_last4, subtotal_cents, shipping_cents, total_cents)"
            " VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (order.id, order.number, order.user_id, order.placed_at.isoformat(), order.status, order.full_name,
             order.email, order.address, order.city, order.zip_code, order.country, order.shipping_method,
             order.card_brand, order.card_last4, order.subtotal_cents, order.shipping_cents, order.total_cents),
        )
        conn.executemany(
            "INSERT INTO order_lines (order_id, product_id, product_name, sku, size, color, unit_price_cents, quantity)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (order.id, line.product_id, line.product_name, line.sku, line.size, line.color,
                 line.unit_price_cents, line.quantity)
                for line in order.lines
            ],
        )
