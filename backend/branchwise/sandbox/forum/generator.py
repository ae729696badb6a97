"""Deterministic generation of the forum's members, forums, posts, comments, votes and subscriptions.

Pure: one `random.Random(seed)` drives every choice, in a fixed order, so a seed always yields the same `SeedData`.
Nothing here touches the database; `seeding.py` writes the result. Ids follow time, as on a real site: a post or
comment written later has a larger id.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..passwords import hash_password
from . import vocabulary
from .demo_users import DEMO_ACCOUNTS, LANDMARK_POSTS
from .vocabulary import ForumSpec

# "Now" for the seeded history: everything happened before this moment.
SEED_NOW = datetime(2025, 6, 1, 12, 0)
POST_PERIOD_DAYS = 365
GENERATED_USERS = 70
POSTS_PER_ACTIVITY = (4, 7)
MAX_COMMENT_DEPTH = 3
# Generated members write content but cannot sign in.
NO_PASSWORD = "!"


@dataclass(frozen=True)
class SeedUser:
    id: int
    username: str
    password_hash: str
    biography: str
    created_at: datetime


@dataclass(frozen=True)
class SeedForum:
    id: int
    name: str
    title: str
    description: str
    created_at: datetime


@dataclass(frozen=True)
class SeedPost:
    id: int
    forum_id: int
    user_id: int
    title: str
    url: str | None
    body: str
    created_at: datetime


@dataclass(frozen=True)
class SeedComment:
    id: int
    post_id: int
    user_id: int
    parent_id: int | None
    body: str
    created_at: datetime


@dataclass(frozen=True)
class SeedData:
    users: tuple[SeedUser, ...]
    forums: tuple[SeedForum, ...]
    # (user_id, forum_id, subscribed_at)
    subscriptions: tuple[tuple[int, int, datetime], ...]
    posts: tuple[SeedPost, ...]
    comments: tuple[SeedComment, ...]
    # (user_id, post_id or comment_id, choice)
    post_votes: tuple[tuple[int, int, int], ...]
    comment_votes: tuple[tuple[int, int, int], ...]


@dataclass
class _PostDraft:
    forum: SeedForum
    spec: ForumSpec
    user_id: int
    title: str
    url: str | None
    body: str
    created_at: datetime
    subject: str
    popularity: float


@dataclass
class _CommentDraft:
    key: int
    post_key: int
    user_id: int
    parent_key: int | None
    depth: int
    body: str
    created_at: datetime
    replies: list[int] = field(default_factory=list)


def generate(seed: int) -> SeedData:
    return _Generator(seed).generate()


class _Generator:
    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._rng = random.Random(seed)

    def generate(self) -> SeedData:
        users = self._users()
        forums = tuple(
            SeedForum(position, spec.name, spec.title, spec.description, self._moment(datetime(2019, 1, 1), 1200))
            for position, spec in enumerate(vocabulary.FORUMS, start=1)
        )
        subscriptions = self._subscriptions(users, forums)
        drafts = self._post_drafts(users, forums)
        drafts.sort(key=lambda draft: draft.created_at)
        posts = tuple(
            SeedPost(post_id, d.forum.id, d.user_id, d.title, d.url, d.body, d.created_at)
            for post_id, d in enumerate(drafts, start=1)
        )
        comments = self._comments(users, drafts)
        post_votes = tuple(
            vote
            for post_id, draft in enumerate(drafts, start=1)
            for vote in self._votes(users, post_id, draft.user_id, draft.popularity * 6)
        )
        comment_votes = tuple(
            vote
            for comment in comments
            for vote in self._votes(users, comment.id, comment.user_id, self._rng.uniform(0.2, 3.0))
        )
        return SeedData(users, forums, subscriptions, posts, comments, post_votes, comment_votes)

    def _moment(self, start: datetime, days: int) -> datetime:
        return start + timedelta(minutes=self._rng.randrange(days * 24 * 60))

    def _users(self) -> tuple[SeedUser, ...]:
        users = [
            SeedUser(position, account.username, hash_password(account.password, salt=f"{self._seed}-{position}"),
                     account.biography, datetime(2021, 3, position, 10, 0))
            for position, account in enumerate(DEMO_ACCOUNTS, start=1)
        ]
        taken = {user.username.lower() for user in users}
        while len(users) < len(DEMO_ACCOUNTS) + GENERATED_USERS:
            name = (f"{self._rng.choice(vocabulary.USERNAME_FIRST)}_{self._rng.choice(vocabulary.USERNAME_SECOND)}"
                    f"{self._rng.choice(('', str(self._rng.randint(1, 99))))}")
            if name.lower() in taken:
                continue
            taken.add(name.lower())
            users.append(SeedUser(len(users) + 1, name, NO_PASSWORD, self._rng.choice(vocabulary.BIOGRAPHIES),
                                  self._moment(datetime(2020, 1, 1), 1400)))
        return tuple(users)

    def _subscriptions(
        self, users: tuple[SeedUser, ...], forums: tuple[SeedForum, ...]
    ) -> tuple[tuple[int, int, datetime], ...]:
        by_name = {forum.name: forum for forum in forums}
        rows: list[tuple[int, int, datetime]] = []
        for user in users:
            if user.id <= len(DEMO_ACCOUNTS):
                chosen = [by_name[name] for name in DEMO_ACCOUNTS[user.id - 1].subscriptions]
            else:
                chosen = sorted(self._rng.sample(forums, self._rng.randint(2, 10)), key=lambda forum: forum.id)
            rows.extend((user.id, forum.id, self._moment(max(user.created_at, forum.created_at), 200))
                        for forum in chosen)
        return tuple(rows)

    def _post_drafts(self, users: tuple[SeedUser, ...], forums: tuple[SeedForum, ...]) -> list[_PostDraft]:
        user_ids = {user.username: user.id for user in users}
        by_name = {forum.name: forum for forum in forums}
        specs = {spec.name: spec for spec in vocabulary.FORUMS}
        drafts = [
            _PostDraft(by_name[landmark.forum], specs[landmark.forum], user_ids[landmark.author], landmark.title,
                       landmark.url, landmark.body, landmark.created_at, specs[landmark.forum].subjects[0],
                       self._rng.uniform(2.0, 4.0))
            for landmark in LANDMARK_POSTS
        ]
        period_start = SEED_NOW - timedelta(days=POST_PERIOD_DAYS)
        for forum, spec in zip(forums, vocabulary.FORUMS, strict=True):
            for _ in range(spec.activity * self._rng.randint(*POSTS_PER_ACTIVITY)):
                subject = self._rng.choice(spec.subjects)
                is_link = self._rng.random() < 0.2
                templates = vocabulary.LINK_TITLE_TEMPLATES if is_link else vocabulary.TITLE_TEMPLATES
                title = self._rng.choice(templates).format(subject=subject)
                title = title[0].upper() + title[1:]
                url = None
                body = ""
                if is_link:
                    url = (f"https://{self._rng.choice(vocabulary.LINK_DOMAINS)}/{spec.name}/"
                           f"{self._rng.randint(1000, 99999)}")
                else:
                    body = self._body(subject)
                drafts.append(_PostDraft(forum, spec, self._rng.choice(users).id, title, url, body,
                                         self._moment(period_start, POST_PERIOD_DAYS), subject,
                                         self._rng.paretovariate(1.3)))
        return drafts

    def _body(self, subject: str) -> str:
        parts = [self._rng.choice(vocabulary.BODY_OPENERS), *self._rng.sample(vocabulary.BODY_MIDDLES, 2),
                 self._rng.choice(vocabulary.BODY_CLOSERS)]
        return " ".join(part.format(subject=subject) for part in parts)

    def _comments(self, users: tuple[SeedUser, ...], drafts: list[_PostDraft]) -> tuple[SeedComment, ...]:
        comments: list[_CommentDraft] = []
        for post_key, draft in enumerate(drafts, start=1):
            mean = 1.5 + draft.popularity * 1.5
            thread: list[_CommentDraft] = []
            for _ in range(min(30, int(self._rng.expovariate(1 / mean)))):
                parent = None
                if thread and self._rng.random() < 0.45:
                    parent = self._rng.choice(thread)
                    if parent.depth >= MAX_COMMENT_DEPTH:
                        parent = None
                since = parent.created_at if parent else draft.created_at
                created = since + timedelta(minutes=self._rng.randint(1, 3 * 24 * 60))
                # Late threads are cut off at the seeded "now"; ids still follow the order of writing.
                created = min(created, SEED_NOW - timedelta(minutes=1))
                text = self._rng.choice(vocabulary.COMMENTS).format(subject=draft.subject)
                comment = _CommentDraft(len(comments) + 1, post_key, self._rng.choice(users).id,
                                        parent.key if parent else None, parent.depth + 1 if parent else 1,
                                        text[0].upper() + text[1:], created)
                thread.append(comment)
                comments.append(comment)
        comments.sort(key=lambda comment: (comment.created_at, comment.key))
        ids = {comment.key: comment_id for comment_id, comment in enumerate(comments, start=1)}
        return tuple(
            SeedComment(ids[c.key], c.post_key, c.user_id, ids[c.parent_key] if c.parent_key else None, c.body,
                        c.created_at)
            for c in comments
        )

    def _votes(
        self, users: tuple[SeedUser, ...], target_id: int, author_id: int, popularity: float
    ) -> list[tuple[int, int, int]]:
        voters = [user for user in users if user.id != author_id]
        count = min(len(voters), int(popularity * self._rng.uniform(0.5, 1.5)))
        upvote_share = self._rng.uniform(0.55, 0.97)
        chosen = sorted(self._rng.sample(voters, count), key=lambda user: user.id)
        return [(user.id, target_id, 1 if self._rng.random() < upvote_share else -1) for user in chosen]
