"""Typed records read from the forum database; shared by the web layer and ForumQueries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

SLUG_WORDS = 8


def slugify(title: str) -> str:
    """Postmill-style URL words: "What's new in Rust?" -> "what-s-new-in-rust"."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words[:SLUG_WORDS]) or "post"


@dataclass(frozen=True)
class User:
    id: int
    username: str
    biography: str
    created_at: datetime


@dataclass(frozen=True)
class Forum:
    id: int
    name: str
    title: str
    description: str
    created_at: datetime
    subscriber_count: int
    post_count: int

    @property
    def path(self) -> str:
        return f"/f/{self.name}"


@dataclass(frozen=True)
class Post:
    id: int
    forum_name: str
    author: str
    title: str
    url: str | None
    body: str
    created_at: datetime
    edited_at: datetime | None
    score: int
    comment_count: int

    @property
    def slug(self) -> str:
        return slugify(self.title)

    @property
    def path(self) -> str:
        return f"/f/{self.forum_name}/{self.id}/{self.slug}"

    @property
    def base_path(self) -> str:
        """Where the post's actions live: `<base_path>/-/edit`, `/-/delete`, `/-/comment`."""
        return f"/f/{self.forum_name}/{self.id}"

    @property
    def domain(self) -> str:
        if not self.url:
            return ""
        return self.url.split("://", 1)[-1].split("/", 1)[0]


@dataclass(frozen=True)
class Comment:
    id: int
    post_id: int
    post_title: str
    forum_name: str
    author: str
    parent_id: int | None
    body: str
    created_at: datetime
    score: int
    # Filled in for a post page's thread; empty elsewhere.
    replies: tuple[Comment, ...] = field(default=())

    @property
    def post_path(self) -> str:
        return f"/f/{self.forum_name}/{self.post_id}/{slugify(self.post_title)}"

    @property
    def path(self) -> str:
        return f"/f/{self.forum_name}/{self.post_id}/-/comment/{self.id}"


@dataclass(frozen=True)
class Session:
    id: int
    token: str
    user_id: int
