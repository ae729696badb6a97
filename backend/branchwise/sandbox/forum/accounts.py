"""Members signing in and out, and the session cookie's server-side record.

A session row is written only when someone signs in (a POST), so browsing alone never writes to the database.
"""

from __future__ import annotations

import secrets
import sqlite3
from datetime import datetime

from ..passwords import verify_password
from .models import Session, User

SESSION_COOKIE = "bw_forum_session"


class Accounts:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def session(self, token: str | None) -> Session | None:
        if not token:
            return None
        row = self._conn.execute("SELECT id, token, user_id FROM sessions WHERE token = ?", (token,)).fetchone()
        return Session(row["id"], row["token"], row["user_id"]) if row else None

    def user_by_id(self, user_id: int) -> User | None:
        row = self._conn.execute(
            "SELECT id, username, biography, created_at FROM users WHERE id = ?", (user_id,)
        ).fetchone()
        return User(row["id"], row["username"], row["biography"], datetime.fromisoformat(row["created_at"])) \
            if row else None

    def authenticate(self, username: str, password: str) -> User | None:
        row = self._conn.execute(
            "SELECT id, password_hash FROM users WHERE username = ?", (username.strip(),)
        ).fetchone()
        if row is None or not verify_password(password, row["password_hash"]):
            return None
        return self.user_by_id(row["id"])

    def sign_in(self, user: User, now: datetime) -> Session:
        token = secrets.token_urlsafe(24)
        cursor = self._conn.execute(
            "INSERT INTO sessions (token, user_id, created_at) VALUES (?, ?, ?)", (token, user.id, now.isoformat())
        )
        return Session(int(cursor.lastrowid or 0), token, user.id)

    def sign_out(self, session: Session) -> None:
        self._conn.execute("DELETE FROM sessions WHERE id = ?", (session.id,))
