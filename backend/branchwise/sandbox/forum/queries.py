"""Typed, read-only questions about a forum's current state, for tests and the harness's reference answers.

Ask the database instead of hard-coding facts ("the top post in f/books has 41 points"): facts change with the seed
and the vocabulary, questions do not. Every call opens its own short connection, so it is safe while a server runs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .. import database
from .board import Board
from .listing import ForumSort, PostSort, sort_forums, sort_posts
from .models import Comment, Forum, Post, User
from .schema import TABLES

T = TypeVar("T")


class ForumQueries:
    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path

    def _read(self, question: Callable[[sqlite3.Connection], T]) -> T:
        return database.read(self.db_path, question)

    def _board(self, question: Callable[[Board], T]) -> T:
        return self._read(lambda conn: question(Board(conn)))

    def row_counts(self) -> dict[str, int]:
        return self._read(lambda c: {t: int(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in TABLES})

    # Members

    def user(self, username: str) -> User:
        return _found(self._board(lambda b: b.user(username)), f"no member called {username!r}")

    def usernames(self) -> list[str]:
        return self._read(lambda c: [r[0] for r in c.execute("SELECT username FROM users ORDER BY id")])

    # Forums

    def forums(self, sort: ForumSort = ForumSort.NAME) -> list[Forum]:
        return sort_forums(self._board(lambda b: b.forums()), sort)

    def forum(self, name: str) -> Forum:
        return _found(self._board(lambda b: b.forum(name)), f"no forum called {name!r}")

    def subscriptions(self, username: str) -> list[str]:
        """Names of the forums the member is subscribed to, alphabetically."""
        user = self.user(username)
        return [forum.name for forum in self._board(lambda b: b.subscribed_forums(user.id))]

    # Posts

    def posts(self, forum: str | None = None, sort: PostSort = PostSort.NEW) -> list[Post]:
        """Posts of one forum (or all), in the order the site lists them with `sort`."""

        def question(board: Board) -> list[Post]:
            found = board.forum(forum) if forum else None
            if forum and found is None:
                raise LookupError(f"no forum called {forum!r}")
            return board.posts(forum_id=found.id if found else None)

        return sort_posts(self._board(question), sort)

    def posts_by(self, username: str, sort: PostSort = PostSort.NEW) -> list[Post]:
        user = self.user(username)
        return sort_posts(self._board(lambda b: b.posts(user_id=user.id)), sort)

    def post(self, post_id: int) -> Post:
        return _found(self._board(lambda b: b.post(post_id)), f"no post with id {post_id}")

    def post_by_title(self, title: str) -> Post:
        matches = [post for post in self._board(lambda b: b.posts()) if post.title == title]
        return _found(min(matches, key=lambda p: p.id) if matches else None, f"no post titled {title!r}")

    def search(self, query: str, sort: PostSort = PostSort.NEW) -> list[Post]:
        """What /search?q= lists: posts whose title or body contains every word of the query."""
        terms = query.split()
        return sort_posts(self._board(lambda b: b.posts(terms=terms)), sort) if terms else []

    # Comments

    def comments(self, post_id: int) -> list[Comment]:
        """Top-level comments with their replies nested."""
        return self._board(lambda b: b.comments_for_post(post_id))

    def comment(self, comment_id: int) -> Comment:
        return _found(self._board(lambda b: b.comment(comment_id)), f"no comment with id {comment_id}")

    def comments_by(self, username: str) -> list[Comment]:
        user = self.user(username)
        return self._board(lambda b: b.comments_by_user(user.id))

    # Votes

    def post_vote(self, username: str, post_id: int) -> int:
        """+1, -1, or 0 when the member has not voted on the post."""
        user = self.user(username)
        return self._board(lambda b: b.post_votes(user.id, [post_id])).get(post_id, 0)

    def comment_vote(self, username: str, comment_id: int) -> int:
        user = self.user(username)
        return self._board(lambda b: b.comment_votes(user.id, [comment_id])).get(comment_id, 0)

    def vote_rows(self, username: str) -> int:
        """How many votes (posts and comments) the member has cast."""
        user = self.user(username)
        return self._read(lambda c: int(c.execute(
            "SELECT (SELECT COUNT(*) FROM post_votes WHERE user_id = ?)"
            " + (SELECT COUNT(*) FROM comment_votes WHERE user_id = ?)", (user.id, user.id)).fetchone()[0]))


def _found(value: T | None, message: str) -> T:
    if value is None:
        raise LookupError(message)
    return value
