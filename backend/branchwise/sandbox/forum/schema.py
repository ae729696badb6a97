"""The forum's SQLite schema. Scores, comment counts and subscriber counts are never stored: they are counted from
the vote, comment and subscription rows, so a checker reading the database sees the same numbers as the pages."""

from __future__ import annotations

SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    -- '!' for generated authors: they write content but cannot sign in.
    password_hash TEXT NOT NULL,
    biography TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    token TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
);
CREATE TABLE forums (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE subscriptions (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    forum_id INTEGER NOT NULL REFERENCES forums(id) ON DELETE CASCADE,
    subscribed_at TEXT NOT NULL,
    PRIMARY KEY (user_id, forum_id)
);
CREATE INDEX subscriptions_by_forum ON subscriptions(forum_id);
CREATE TABLE posts (
    id INTEGER PRIMARY KEY,
    forum_id INTEGER NOT NULL REFERENCES forums(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    title TEXT NOT NULL CHECK (length(title) > 0),
    -- NULL for a text post.
    url TEXT,
    body TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    edited_at TEXT
);
CREATE INDEX posts_by_forum ON posts(forum_id);
CREATE INDEX posts_by_user ON posts(user_id);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY,
    post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    -- NULL for a top-level comment, else the comment it replies to.
    parent_id INTEGER REFERENCES comments(id) ON DELETE CASCADE,
    body TEXT NOT NULL CHECK (length(body) > 0),
    created_at TEXT NOT NULL
);
CREATE INDEX comments_by_post ON comments(post_id);
CREATE INDEX comments_by_user ON comments(user_id);
CREATE TABLE post_votes (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    post_id INTEGER NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    PRIMARY KEY (user_id, post_id)
);
CREATE INDEX post_votes_by_post ON post_votes(post_id);
CREATE TABLE comment_votes (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    comment_id INTEGER NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    PRIMARY KEY (user_id, comment_id)
);
CREATE INDEX comment_votes_by_comment ON comment_votes(comment_id);
"""

TABLES: tuple[str, ...] = (
    "users", "sessions", "forums", "subscriptions", "posts", "comments", "post_votes", "comment_votes",
)
