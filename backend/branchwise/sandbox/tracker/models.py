"""Plain records the tracker's store returns and its templates render."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..pagination import PageNumbers
from .schema import role_name

T = TypeVar("T")


@dataclass(frozen=True)
class User:
    id: int
    username: str
    name: str
    email: str
    bio: str
    created_at: str


@dataclass(frozen=True)
class Session:
    id: int
    token: str
    user_id: int


@dataclass(frozen=True)
class Project:
    id: int
    namespace: str
    path: str
    name: str
    description: str
    visibility: str
    default_branch: str
    created_at: str
    last_activity_at: str
    star_count: int
    open_issues_count: int
    open_merge_requests_count: int

    @property
    def full_path(self) -> str:
        return f"{self.namespace}/{self.path}"

    @property
    def url(self) -> str:
        return f"/{self.full_path}"


@dataclass(frozen=True)
class Member:
    user: User
    access_level: int
    created_at: str

    @property
    def role(self) -> str:
        return role_name(self.access_level)


@dataclass(frozen=True)
class Label:
    id: int
    title: str
    color: str
    description: str
    open_issues_count: int = 0


@dataclass(frozen=True)
class Milestone:
    id: int
    title: str
    description: str
    due_date: str | None
    state: str
    open_issues_count: int = 0
    closed_issues_count: int = 0

    @property
    def percent_complete(self) -> int:
        total = self.open_issues_count + self.closed_issues_count
        return round(100 * self.closed_issues_count / total) if total else 0


@dataclass(frozen=True)
class Issue:
    id: int
    project_full_path: str
    iid: int
    title: str
    description: str
    state: str
    author: User
    milestone: Milestone | None
    labels: tuple[Label, ...]
    assignees: tuple[User, ...]
    created_at: str
    updated_at: str
    closed_at: str | None
    comment_count: int

    @property
    def url(self) -> str:
        return f"/{self.project_full_path}/-/issues/{self.iid}"


@dataclass(frozen=True)
class Note:
    id: int
    author: User
    body: str
    system: bool
    created_at: str


@dataclass(frozen=True)
class MergeRequest:
    iid: int
    title: str
    author: User
    source_branch: str
    target_branch: str
    state: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class ListPage(PageNumbers, Generic[T]):
    """One page of a listing; fits the shared `pagination.paginate`."""

    items: Sequence[T]
    total: int
    page: int
    page_size: int

    @property
    def shown(self) -> int:
        return len(self.items)
