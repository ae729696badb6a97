"""Sort orders and one page of a listing (posts, forums, comments)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Generic, TypeVar

from ..pagination import PageNumbers
from .models import Forum, Post

T = TypeVar("T")

# Reddit's published "hot" formula, as Postmill uses it: votes count logarithmically, age linearly.
_HOT_EPOCH = datetime(2005, 12, 8, 7, 46, 43)
_HOT_SECONDS = 45000


class PostSort(Enum):
    HOT = "hot"
    NEW = "new"
    TOP = "top"
    COMMENTS = "comments"

    @property
    def label(self) -> str:
        return {"hot": "Hot", "new": "New", "top": "Top", "comments": "Most commented"}[self.value]

    @classmethod
    def parse(cls, value: str) -> PostSort:
        return next((sort for sort in cls if sort.value == value.lower()), cls.HOT)


class ForumSort(Enum):
    NAME = "name"
    SUBSCRIBERS = "subscribers"
    POSTS = "posts"

    @property
    def label(self) -> str:
        return {"name": "Name", "subscribers": "Subscribers", "posts": "Submissions"}[self.value]

    @classmethod
    def parse(cls, value: str) -> ForumSort:
        value = value.lower().removeprefix("by_")
        value = "posts" if value == "submissions" else value
        return next((sort for sort in cls if sort.value == value), cls.NAME)


def hot_rank(post: Post) -> float:
    order = math.log10(max(abs(post.score), 1))
    sign = 1 if post.score > 0 else -1 if post.score < 0 else 0
    return sign * order + (post.created_at - _HOT_EPOCH).total_seconds() / _HOT_SECONDS


_POST_KEYS: dict[PostSort, Callable[[Post], tuple[float, ...]]] = {
    PostSort.HOT: lambda p: (-hot_rank(p), -p.id),
    PostSort.NEW: lambda p: (-p.created_at.timestamp(), -p.id),
    PostSort.TOP: lambda p: (-p.score, -p.created_at.timestamp(), -p.id),
    PostSort.COMMENTS: lambda p: (-p.comment_count, -p.created_at.timestamp(), -p.id),
}

_FORUM_KEYS: dict[ForumSort, Callable[[Forum], tuple[object, ...]]] = {
    ForumSort.NAME: lambda f: (f.name.lower(),),
    ForumSort.SUBSCRIBERS: lambda f: (-f.subscriber_count, f.name.lower()),
    ForumSort.POSTS: lambda f: (-f.post_count, f.name.lower()),
}


def sort_posts(posts: Sequence[Post], sort: PostSort) -> list[Post]:
    return sorted(posts, key=_POST_KEYS[sort])


def sort_forums(forums: Sequence[Forum], sort: ForumSort) -> list[Forum]:
    return sorted(forums, key=_FORUM_KEYS[sort])


@dataclass(frozen=True)
class ListPage(PageNumbers, Generic[T]):
    """One page of a listing; fits the shared `pagination.paginate`."""

    items: tuple[T, ...]
    total: int
    page: int
    page_size: int

    @classmethod
    def of(cls, everything: Sequence[T], page: int, page_size: int) -> ListPage[T]:
        """The requested page of `everything`; out-of-range page numbers land on the first or last page."""
        page_count = max(1, math.ceil(len(everything) / page_size))
        page = min(max(1, page), page_count)
        start = (page - 1) * page_size
        return cls(tuple(everything[start:start + page_size]), len(everything), page, page_size)

    @property
    def shown(self) -> int:
        return len(self.items)
