"""SQLite schema, connections and transactions for the shop."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

SCHEMA = """
CREATE TABLE categories (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    blurb TEXT NOT NULL,
    brand_label TEXT NOT NULL
);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    category_id INTEGER NOT NULL REFERENCES categories(id),
    sku TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    brand TEXT NOT NULL,
    description TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents > 0),
    stock INTEGER NOT NULL CHECK (stock >= 0),
    rating REAL NOT NULL,
    review_count INTEGER NOT NULL,
    featured INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX products_by_category ON products(category_id);
CREATE TABLE product_options (
    product_id INTEGER NOT NULL REFERENCES products(id),
    kind TEXT NOT NULL CHECK (kind IN ('size', 'color')),
    value TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (product_id, kind, value)
);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products(id),
    author TEXT NOT NULL,
    rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_on TEXT NOT NULL
);
CREATE INDEX reviews_by_product ON reviews(product_id);
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    address TEXT NOT NULL,
    city TEXT NOT NULL,
    zip_code TEXT NOT NULL,
    country TEXT NOT NULL
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    token TEXT NOT NULL UNIQUE,
    user_id INTEGER REFERENCES users(id),
    created_at TEXT NOT NULL
);
CREATE TABLE cart_lines (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    product_id INTEGER NOT NULL REFERENCES products(id),
    size TEXT NOT NULL DEFAULT '',
    color TEXT NOT NULL DEFAULT '',
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    UNIQUE (session_id, product_id, size, color)
);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    user_id INTEGER REFERENCES users(id),
    session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    placed_at TEXT NOT NULL,
    status TEXT NOT NULL,
    full_name TEXT NOT NULL,
    email TEXT NOT NULL,
    address TEXT NOT NULL,
    city TEXT NOT NULL,
    zip_code TEXT NOT NULL,
    country TEXT NOT NULL,
    shipping_method TEXT NOT NULL,
    card_brand TEXT NOT NULL,
    card_last4 TEXT NOT NULL,
    subtotal_cents INTEGER NOT NULL,
    shipping_cents INTEGER NOT NULL,
    total_cents INTEGER NOT NULL
);
CREATE TABLE order_lines (
    id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(id),
    product_id INTEGER NOT NULL REFERENCES products(id),
    product_name TEXT NOT NULL,
    sku TEXT NOT NULL,
    size TEXT NOT NULL,
    color TEXT NOT NULL,
    unit_price_cents INTEGER NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0)
);
CREATE INDEX order_lines_by_order ON order_lines(order_id);
"""


def connect(path: Path) -> sqlite3.Connection:
    """Autocommit mode: writers open explicit transactions with `transaction()`.

    check_same_thread is off because FastAPI may open and close a request's connection on different worker threads;
    a connection is still only used by one request at a time.
    """
    conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """IMMEDIATE takes the write lock up front, so check-then-update sequences (stock) cannot interleave."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def fingerprint(path: Path) -> str:
    """SHA-256 of the full SQL dump: equal fingerprints mean equal schema and contents."""
    conn = connect(path)
    try:
        digest = hashlib.sha256()
        for statement in conn.iterdump():
            digest.update(statement.encode())
            digest.update(b"\n")
        return digest.hexdigest()
    finally:
        conn.close()


def read(path: Path, question: Callable[[sqlite3.Connection], T]) -> T:
    """Answers `question` on a short connection of its own: safe while a server is running on the same file."""
    conn = connect(path)
    try:
        return question(conn)
    finally:
        conn.close()


def create_fresh(path: Path, schema: str, fill: Callable[[sqlite3.Connection], None]) -> None:
    """Replaces any database at `path` (and its journal) with `schema`, filled by `fill` in one transaction."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in (path, path.with_name(path.name + "-journal"), path.with_name(path.name + "-wal")):
        stale.unlink(missing_ok=True)
    conn = connect(path)
    try:
        conn.executescript(schema)
        with transaction(conn):
            fill(conn)
    finally:
        conn.close()
