"""Reading and changing the forum's content: forums, posts, comments, votes and subscriptions.

Reads return typed records from models.py; writes are single statements or short transactions. Listings are small
enough (hundreds of posts) to sort in Python, which keeps "hot" exactly Postmill's formula.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from ..database import transaction
from .models import Comment, Forum, Post, User

_FORUM_SELECT = """
SELECT f.id, f.name, f.title, f.description, f.created_at,
       (SELECT COUNT(*) FROM subscriptions s WHERE s.forum_id = f.id) AS subscriber_count,
       (SELECT COUNT(*) FROM posts p WHERE p.forum_id = f.id) AS post_count
FROM forums f
"""

_POST_SELECT = """
SELECT p.id, f.name AS forum_name, u.username AS author, p.title, p.url, p.body, p.created_at, p.edited_at,
       (SELECT COALESCE(SUM(v.choice), 0) FROM post_votes v WHERE v.post_id = p.id) AS score,
       (SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) AS comment_count
FROM posts p JOIN forums f ON f.id = p.forum_id JOIN users u ON u.id = p.user_id
"""

_COMMENT_SELECT = """
SELECT c.id, c.post_id, p.title AS post_title, f.name AS forum_name, u.username AS author, c.parent_id, c.body,
       c.created_at, (SELECT COALESCE(SUM(v.choice), 0) FROM comment_votes v WHERE v.comment_id = c.id) AS score
FROM comments c JOIN posts p ON p.id = c.post_id JOIN forums f ON f.id = p.forum_id JOIN users u ON u.id = c.user_id
"""

TITLE_MAX = 300
BODY_MAX = 20000
URL_MAX = 2000
COMMENT_MAX = 10000


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _forum(row: sqlite3.Row) -> Forum:
    return Forum(row["id"], row["name"], row["title"], row["description"],
                 datetime.fromisoformat(row["created_at"]), row["subscriber_count"], row["post_count"])


def _post(row: sqlite3.Row) -> Post:
    edited = row["edited_at"]
    return Post(row["id"], row["forum_name"], row["author"], row["title"], row["url"], row["body"],
                datetime.fromisoformat(row["created_at"]), datetime.fromisoformat(edited) if edited else None,
                row["score"], row["comment_count"])


def _comment(row: sqlite3.Row) -> Comment:
    return Comment(row["id"], row["post_id"], row["post_title"], row["forum_name"], row["author"], row["parent_id"],
                   row["body"], datetime.fromisoformat(row["created_at"]), row["score"])


class Board:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    # Members

    def user(self, username: str) -> User | None:
        row = self._conn.execute(
            "SELECT id, username, biography, created_at FROM users WHERE username = ?", (username,)
        ).fetchone()
        return User(row["id"], row["username"], row["biography"], datetime.fromisoformat(row["created_at"])) \
            if row else None

    # Forums

    def forums(self) -> list[Forum]:
        return [_forum(row) for row in self._conn.execute(f"{_FORUM_SELECT} ORDER BY f.id")]

    def forum(self, name: str) -> Forum | None:
        row = self._conn.execute(f"{_FORUM_SELECT} WHERE f.name = ?", (name,)).fetchone()
        return _forum(row) if row else None

    def subscribed_forums(self, user_id: int) -> list[Forum]:
        rows = self._conn.execute(
            f"{_FORUM_SELECT} WHERE f.id IN (SELECT forum_id FROM subscriptions WHERE user_id = ?)"
            " ORDER BY f.name COLLATE NOCASE",
            (user_id,),
        )
        return [_forum(row) for row in rows]

    def is_subscribed(self, user_id: int, forum_id: int) -> bool:
        return self._conn.execute(
            "SELECT 1 FROM subscriptions WHERE user_id = ? AND forum_id = ?", (user_id, forum_id)
        ).fetchone() is not None

    def subscribe(self, user_id: int, forum_id: int, now: datetime) -> None:
        self._conn.execute(
            "INSERT OR IGNORE INTO subscriptions (user_id, forum_id, subscribed_at) VALUES (?, ?, ?)",
            (user_id, forum_id, now.isoformat()),
        )

    def unsubscribe(self, user_id: int, forum_id: int) -> None:
        self._conn.execute("DELETE FROM subscriptions WHERE user_id = ? AND forum_id = ?", (user_id, forum_id))

    # Posts

    def posts(
        self,
        forum_id: int | None = None,
        user_id: int | None = None,
        forum_ids: Sequence[int] | None = None,
        terms: Sequence[str] = (),
    ) -> list[Post]:
        """Every post matching the filters, unsorted; `terms` must each appear in the title or the body."""
        where: list[str] = []
        params: list[object] = []
        if forum_id is not None:
            where.append("p.forum_id = ?")
            params.append(forum_id)
        if user_id is not None:
            where.append("p.user_id = ?")
            params.append(user_id)
        if forum_ids is not None:
            where.append(f"p.forum_id IN ({','.join('?' for _ in forum_ids) or 'NULL'})")
            params.extend(forum_ids)
        for term in terms:
            where.append("(p.title LIKE ? ESCAPE '\\' OR p.body LIKE ? ESCAPE '\\')")
            params.extend((like_pattern(term), like_pattern(term)))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return [_post(row) for row in self._conn.execute(_POST_SELECT + clause, params)]

    def post(self, post_id: int) -> Post | None:
        row = self._conn.execute(f"{_POST_SELECT} WHERE p.id = ?", (post_id,)).fetchone()
        return _post(row) if row else None

    def post_author_id(self, post_id: int) -> int | None:
        row = self._conn.execute("SELECT user_id FROM posts WHERE id = ?", (post_id,)).fetchone()
        return int(row["user_id"]) if row else None

    def create_post(
        self, forum_id: int, user_id: int, title: str, url: str | None, body: str, now: datetime
    ) -> int:
        cursor = self._conn.execute(
            "INSERT INTO posts (forum_id, user_id, title, url, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (forum_id, user_id, title, url, body, now.isoformat()),
        )
        return int(cursor.lastrowid or 0)

    def edit_post(self, post_id: int, title: str, url: str | None, body: str, now: datetime) -> None:
        self._conn.execute(
            "UPDATE posts SET title = ?, url = ?, body = ?, edited_at = ? WHERE id = ?",
            (title, url, body, now.isoformat(), post_id),
        )

    def delete_post(self, post_id: int) -> None:
        """Comments and votes go with it (ON DELETE CASCADE)."""
        self._conn.execute("DELETE FROM posts WHERE id = ?", (post_id,))

    # Comments

    def comments_for_post(self, post_id: int) -> list[Comment]:
        """Top-level comments, each with its replies nested, oldest first at every level."""
        rows = self._conn.execute(f"{_COMMENT_SELECT} WHERE c.post_id = ? ORDER BY c.id", (post_id,))
        flat = [_comment(row) for row in rows]
        children: dict[int | None, list[Comment]] = {}
        for comment in flat:
            children.setdefault(comment.parent_id, []).append(comment)

        def nest(comment: Comment) -> Comment:
            replies = tuple(nest(reply) for reply in children.get(comment.id, ()))
            return Comment(comment.id, comment.post_id, comment.post_title, comment.forum_name, comment.author,
                           comment.parent_id, comment.body, comment.created_at, comment.score, replies)

        return [nest(comment) for comment in children.get(None, ())]

    def comments_by_user(self, user_id: int) -> list[Comment]:
        rows = self._conn.execute(f"{_COMMENT_SELECT} WHERE c.user_id = ? ORDER BY c.created_at DESC, c.id DESC",
                                  (user_id,))
        return [_comment(row) for row in rows]

    def comment(self, comment_id: int) -> Comment | None:
        row = self._conn.execute(f"{_COMMENT_SELECT} WHERE c.id = ?", (comment_id,)).fetchone()
        return _comment(row) if row else None

    def add_comment(self, post_id: int, user_id: int, parent_id: int | None, body: str, now: datetime) -> int:
        cursor = self._conn.execute(
            "INSERT INTO comments (post_id, user_id, parent_id, body, created_at) VALUES (?, ?, ?, ?, ?)",
            (post_id, user_id, parent_id, body, now.isoformat()),
        )
        return int(cursor.lastrowid or 0)

    # Votes: one row per member and target; choice 0 takes the vote back.

    def post_votes(self, user_id: int, post_ids: Sequence[int]) -> dict[int, int]:
        return self._votes("post_votes", "post_id", user_id, post_ids)

    def comment_votes(self, user_id: int, comment_ids: Sequence[int]) -> dict[int, int]:
        return self._votes("comment_votes", "comment_id", user_id, comment_ids)

    def vote_post(self, user_id: int, post_id: int, choice: int) -> None:
        self._vote("post_votes", "post_id", user_id, post_id, choice)

    def vote_comment(self, user_id: int, comment_id: int, choice: int) -> None:
        self._vote("comment_votes", "comment_id", user_id, comment_id, choice)

    def _votes(self, table: str, column: str, user_id: int, ids: Sequence[int]) -> dict[int, int]:
        if not ids:
            return {}
        placeholders = ",".join("?" for _ in ids)
        rows = self._conn.execute(
            f"SELECT {column} AS target, choice FROM {table} WHERE user_id = ? AND {column} IN ({placeholders})",
            [user_id, *ids],
        )
        return {row["target"]: row["choice"] for row in rows}

    def _vote(self, table: str, column: str, user_id: int, target_id: int, choice: int) -> None:
        with transaction(self._conn):
            self._conn.execute(f"DELETE FROM {table} WHERE user_id = ? AND {column} = ?", (user_id, target_id))
            if choice in (-1, 1):
                self._conn.execute(f"INSERT INTO {table} (user_id, {column}, choice) VALUES (?, ?, ?)",
                                   (user_id, target_id, choice))
