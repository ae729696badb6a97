"""Creates a fresh tracker database file and fills it from the deterministic generator."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import fields
from pathlib import Path

from .. import database
from .generator import SeedData, generate
from .schema import SCHEMA

log = logging.getLogger(__name__)


def create_tracker_database(path: Path, seed: int) -> SeedData:
    """Replaces any file at `path` with a newly seeded tracker and returns what was written."""
    data = generate(seed)
    database.create_fresh(path, SCHEMA, lambda conn: _write(conn, data))
    log.info("seeded tracker database %s (seed %d, %d projects, %d issues)", path, seed, len(data.projects),
             len(data.issues))
    return data


def _write(conn: sqlite3.Connection, data: SeedData) -> None:
    # Dataclass field order is insert order: parents before the rows that refer to them.
    for table in fields(data):
        rows = getattr(data, table.name)
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            conn.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows)
