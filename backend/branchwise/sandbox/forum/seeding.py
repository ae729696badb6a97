"""Creates a fresh forum database file and fills it from the deterministic generator."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from .. import database
from .generator import SeedData, generate
from .schema import SCHEMA

log = logging.getLogger(__name__)


def create_forum_database(path: Path, seed: int) -> SeedData:
    """Replaces any file at `path` with a newly seeded forum and returns what was written."""
    data = generate(seed)
    database.create_fresh(path, SCHEMA, lambda conn: _write(conn, data))
    log.info("seeded forum database %s (seed %d, %d posts, %d comments)", path, seed, len(data.posts),
             len(data.comments))
    return data


def _write(conn: sqlite3.Connection, data: SeedData) -> None:
    conn.executemany(
        "INSERT INTO users (id, username, password_hash, biography, created_at) VALUES (?, ?, ?, ?, ?)",
        [(u.id, u.username, u.password_hash, u.biography, u.created_at.isoformat()) for u in data.users],
    )
    conn.executemany(
        "INSERT INTO forums (id, name, title, description, created_at) VALUES (?, ?, ?, ?, ?)",
        [(f.id, f.name, f.title, f.description, f.created_at.isoformat()) for f in data.forums],
    )
    conn.executemany(
        "INSERT INTO subscriptions (user_id, forum_id, subscribed_at) VALUES (?, ?, ?)",
        [(user_id, forum_id, at.isoformat()) for user_id, forum_id, at in data.subscriptions],
    )
    conn.executemany(
        "INSERT INTO posts (id, forum_id, user_id, title, url, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(p.id, p.forum_id, p.user_id, p.title, p.url, p.body, p.created_at.isoformat()) for p in data.posts],
    )
    conn.executemany(
        "INSERT INTO comments (id, post_id, user_id, parent_id, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        [(c.id, c.post_id, c.user_id, c.parent_id, c.body, c.created_at.isoformat()) for c in data.comments],
    )
    conn.executemany("INSERT INTO post_votes (user_id, post_id, choice) VALUES (?, ?, ?)", data.post_votes)
    conn.executemany("INSERT INTO comment_votes (user_id, comment_id, choice) VALUES (?, ?, ?)", data.comment_votes)
