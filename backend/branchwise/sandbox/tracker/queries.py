"""Typed, read-only questions about a tracker's current state, for tests and the eval harness's reference answers.

Ask the database instead of hard-coding facts: facts change with the seed and the vocabulary, questions do not.
Every call opens its own short connection, so it is safe while a server is running. Projects are named by their
full path ("byteblaze/trail-map") and seen as an administrator would (private ones included).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import TypeVar

from .. import database
from .generator import SeedData
from .models import Issue, Label, Member, MergeRequest, Milestone, Note, Project, User
from .store import IssueFilter, IssueSort, ProjectSort, Store

T = TypeVar("T")
TABLES = (*(table.name for table in fields(SeedData)), "sessions")
ALL = 1_000_000


class TrackerQueries:
    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path

    def _read(self, question: Callable[[Store, sqlite3.Connection], T]) -> T:
        return database.read(self.db_path, lambda conn: question(Store(conn), conn))

    def _project(self, store: Store, full_path: str) -> Project:
        namespace, _, path = full_path.strip("/").partition("/")
        found = store.project(namespace, path, None, everyone=True)
        if found is None:
            raise LookupError(f"no project {full_path!r}")
        return found

    # Whole database

    def table_counts(self) -> dict[str, int]:
        return self._read(lambda _, c: {t: int(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in TABLES})

    # People

    def user(self, username: str) -> User | None:
        return self._read(lambda store, _: store.user_by_username(username))

    def usernames(self) -> tuple[str, ...]:
        """Every account, by id."""
        return self._read(lambda _, c: tuple(row[0] for row in c.execute("SELECT username FROM users ORDER BY id")))

    # Projects

    def project(self, full_path: str) -> Project:
        return self._read(lambda store, _: self._project(store, full_path))

    def projects(self, sort: ProjectSort = ProjectSort.LATEST_ACTIVITY, name: str = "",
                 viewer_username: str | None = None) -> tuple[Project, ...]:
        """Every project the viewer (None: a visitor who is not signed in) sees on Explore, in that order."""

        def question(store: Store, _: sqlite3.Connection) -> tuple[Project, ...]:
            viewer = store.user_by_username(viewer_username) if viewer_username else None
            return tuple(store.projects_page(viewer.id if viewer else None, sort, 1, ALL, name=name).items)

        return self._read(question)

    def members(self, full_path: str) -> tuple[Member, ...]:
        return self._read(lambda store, _: store.members(self._project(store, full_path).id))

    def role(self, full_path: str, username: str) -> str | None:
        """"Developer", "Maintainer", ... or None for non-members."""
        return next((m.role for m in self.members(full_path) if m.user.username == username), None)

    def star_count(self, full_path: str) -> int:
        return self.project(full_path).star_count

    def starred_by(self, full_path: str, username: str) -> bool:
        def question(store: Store, _: sqlite3.Connection) -> bool:
            user = store.user_by_username(username)
            return store.starred(self._project(store, full_path).id, user.id if user else None)

        return self._read(question)

    def labels(self, full_path: str) -> tuple[Label, ...]:
        return self._read(lambda store, _: store.labels(self._project(store, full_path).id))

    def milestones(self, full_path: str, state: str = "all") -> tuple[Milestone, ...]:
        return self._read(lambda store, _: store.milestones(self._project(store, full_path).id, state))

    # Issues

    def issues(self, full_path: str, filters: IssueFilter | None = None,
               sort: IssueSort = IssueSort.CREATED_DESC) -> tuple[Issue, ...]:
        """Every issue the project's list shows for these filters (default: open ones), in its order (all pages)."""
        chosen = filters or IssueFilter()
        return self._read(
            lambda store, _: tuple(store.issues_page(self._project(store, full_path).id, chosen, sort, 1, ALL).items)
        )

    def issue_count(self, full_path: str, state: str = "opened") -> int:
        return len(self.issues(full_path, IssueFilter(state=state)))

    def issue(self, full_path: str, iid: int) -> Issue | None:
        return self._read(lambda store, _: store.issue(self._project(store, full_path).id, iid))

    def latest_issue(self, full_path: str) -> Issue | None:
        """The issue with the highest iid."""
        found = self.issues(full_path, IssueFilter(state="all"), IssueSort.CREATED_DESC)
        return max(found, key=lambda issue: issue.iid) if found else None

    def notes(self, full_path: str, iid: int) -> tuple[Note, ...]:
        issue = self.issue(full_path, iid)
        return self._read(lambda store, _: store.notes(issue.id)) if issue else ()

    def comments(self, full_path: str, iid: int) -> tuple[Note, ...]:
        """Notes people wrote, without system notes."""
        return tuple(note for note in self.notes(full_path, iid) if not note.system)

    def search_issues(self, query: str, viewer_username: str | None = None) -> tuple[Issue, ...]:
        """What /search?scope=issues lists, most recently updated first."""

        def question(store: Store, _: sqlite3.Connection) -> tuple[Issue, ...]:
            viewer = store.user_by_username(viewer_username) if viewer_username else None
            filters = IssueFilter(state="all", search=query)
            return tuple(store.issues_page(None, filters, IssueSort.UPDATED_DESC, 1, ALL,
                                           viewer=viewer.id if viewer else None).items)

        return self._read(question)

    # Merge requests

    def merge_requests(self, full_path: str, state: str = "all") -> tuple[MergeRequest, ...]:
        return self._read(
            lambda store, _: tuple(store.merge_requests_page(self._project(store, full_path).id, state, 1, ALL).items)
        )
