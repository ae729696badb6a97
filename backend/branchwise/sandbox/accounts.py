"""Users, sign-in and the session cookie's server-side record.

Sessions are created lazily, on the first state-changing POST, so plain browsing (GET) never writes to the database.
"""

from __future__ import annotations

import secrets
import sqlite3
from datetime import datetime

from .database import transaction
from .models import Session, User
from .passwords import verify_password

SESSION_COOKIE = "bw_shop_session"

_USER_COLUMNS = "id, email, name, address, city, zip_code, country"


class Accounts:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def session(self, token: str | None) -> Session | None:
        if not token:
            return None
        row = self._conn.execute("SELECT id, token, user_id FROM sessions WHERE token = ?", (token,)).fetchone()
        return Session(row["id"], row["token"], row["user_id"]) if row else None

    def start_session(self, now: datetime) -> Session:
        token = secrets.token_urlsafe(24)
        cursor = self._conn.execute(
            "INSERT INTO sessions (token, user_id, created_at) VALUES (?, NULL, ?)", (token, now.isoformat())
        )
        return Session(int(cursor.lastrowid or 0), token, None)

    def user(self, user_id: int | None) -> User | None:
        if user_id is None:
            return None
        row = self._conn.execute(f"SELECT {_USER_COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()
        return User(**dict(row)) if row else None

    def authenticate(self, email: str, password: str) -> User | None:
        row = self._conn.execute(
            f"SELECT {_USER_COLUMNS}, password_hash FROM users WHERE email = ?", (email.strip(),)
        ).fetchone()
        if row is None or not verify_password(password, row["password_hash"]):
            return None
        return User(**{key: row[key] for key in row.keys() if key != "password_hash"})

    def sign_in(self, session: Session | None, user: User, now: datetime) -> Session:
        """Attaches the user to the session, keeping the guest's cart, under a new token (no session fixation)."""
        with transaction(self._conn):
            current = session or self.start_session(now)
            token = secrets.token_urlsafe(24)
            self._conn.execute("UPDATE sessions SET token = ?, user_id = ? WHERE id = ?", (token, user.id, current.id))
        return Session(current.id, token, user.id)

    def sign_out(self, session: Session) -> None:
        """Ends the session; its cart goes with it, as on most shops."""
        self._conn.execute("DELETE FROM sessions WHERE id = ?", (session.id,))
