"""Every state change the tracker knows, each in one transaction. Only POST handlers call these.

Permissions follow GitLab: any signed-in user who can see a project may open issues, comment and star it;
closing and reopening needs Reporter or the issue's author; labels and assignees need Reporter; adding members
needs Maintainer (and Owner to add an Owner).
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from ..database import transaction
from .models import Issue, Project, User
from .schema import MAINTAINER, OWNER, REPORTER, role_name


class Refused(Exception):
    """A request the user may not make, or one that does not make sense; the message is shown to them."""


@dataclass(frozen=True)
class NewIssue:
    title: str
    description: str = ""
    labels: tuple[str, ...] = ()
    assignee_username: str = ""
    milestone_title: str = ""


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


class Actions:
    def __init__(self, conn: sqlite3.Connection, now: datetime) -> None:
        self._conn = conn
        self._now = _iso(now)

    def _level(self, project: Project, user: User) -> int:
        row = self._conn.execute(
            "SELECT access_level FROM project_members WHERE project_id = ? AND user_id = ?", (project.id, user.id)
        ).fetchone()
        return int(row[0]) if row else 0

    def _require(self, project: Project, user: User, level: int, what: str) -> None:
        if self._level(project, user) < level:
            raise Refused(f"You need at least the {role_name(level)} role in {project.name} to {what}.")

    def _touch(self, project: Project, issue_id: int | None = None) -> None:
        self._conn.execute("UPDATE projects SET last_activity_at = ? WHERE id = ?", (self._now, project.id))
        if issue_id is not None:
            self._conn.execute("UPDATE issues SET updated_at = ? WHERE id = ?", (self._now, issue_id))

    def _system_note(self, issue_id: int, user: User, body: str) -> None:
        self._conn.execute(
            "INSERT INTO notes (issue_id, author_id, body, system, created_at) VALUES (?, ?, ?, 1, ?)",
            (issue_id, user.id, body, self._now),
        )

    # Sessions

    def sign_in(self, user: User) -> str:
        token = secrets.token_urlsafe(24)
        self._conn.execute("INSERT INTO sessions (token, user_id, created_at) VALUES (?, ?, ?)",
                           (token, user.id, self._now))
        return token

    def sign_out(self, token: str) -> None:
        self._conn.execute("DELETE FROM sessions WHERE token = ?", (token,))

    # Issues

    def create_issue(self, project: Project, user: User, new: NewIssue) -> int:
        """Returns the new issue's iid (one more than the project's highest)."""
        title = " ".join(new.title.split())
        if not title:
            raise Refused("Title can't be blank.")
        if len(title) > 255:
            raise Refused("Title is too long (maximum is 255 characters).")
        with transaction(self._conn):
            milestone_id = None
            if new.milestone_title:
                row = self._conn.execute("SELECT id FROM milestones WHERE project_id = ? AND title = ?",
                                         (project.id, new.milestone_title)).fetchone()
                if row is None:
                    raise Refused(f"There is no milestone called {new.milestone_title}.")
                milestone_id = row[0]
            iid = int(self._conn.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM issues WHERE project_id = ?",
                                         (project.id,)).fetchone()[0])
            cursor = self._conn.execute(
                "INSERT INTO issues (project_id, iid, title, description, state, author_id, milestone_id, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, 'opened', ?, ?, ?, ?)",
                (project.id, iid, title, new.description.strip(), user.id, milestone_id, self._now, self._now),
            )
            issue_id = int(cursor.lastrowid or 0)
            for label in new.labels:
                self._add_label(project, issue_id, label)
            if new.assignee_username:
                self._assign(project, issue_id, new.assignee_username)
            self._touch(project)
        return iid

    def set_state(self, project: Project, user: User, issue: Issue, state: str) -> None:
        if issue.author.id != user.id:
            self._require(project, user, REPORTER, "close or reopen issues")
        if issue.state == state:
            return
        with transaction(self._conn):
            self._conn.execute("UPDATE issues SET state = ?, closed_at = ? WHERE id = ?",
                               (state, self._now if state == "closed" else None, issue.id))
            self._system_note(issue.id, user, "closed" if state == "closed" else "reopened")
            self._touch(project, issue.id)

    def comment(self, project: Project, user: User, issue: Issue, body: str) -> None:
        if not body.strip():
            raise Refused("Comment can't be blank.")
        with transaction(self._conn):
            self._conn.execute(
                "INSERT INTO notes (issue_id, author_id, body, system, created_at) VALUES (?, ?, ?, 0, ?)",
                (issue.id, user.id, body.strip(), self._now),
            )
            self._touch(project, issue.id)

    def add_label(self, project: Project, user: User, issue: Issue, title: str) -> None:
        self._require(project, user, REPORTER, "label issues")
        with transaction(self._conn):
            if self._add_label(project, issue.id, title):
                self._system_note(issue.id, user, f"added ~{title} label")
                self._touch(project, issue.id)

    def _add_label(self, project: Project, issue_id: int, title: str) -> bool:
        row = self._conn.execute("SELECT id, title FROM labels WHERE project_id = ? AND title = ? COLLATE NOCASE",
                                 (project.id, title.strip())).fetchone()
        if row is None:
            raise Refused(f"There is no label called {title.strip()} in {project.name}.")
        cursor = self._conn.execute("INSERT OR IGNORE INTO issue_labels (issue_id, label_id) VALUES (?, ?)",
                                    (issue_id, row[0]))
        return cursor.rowcount > 0

    def assign(self, project: Project, user: User, issue: Issue, username: str) -> None:
        self._require(project, user, REPORTER, "assign issues")
        with transaction(self._conn):
            if self._assign(project, issue.id, username):
                self._system_note(issue.id, user, f"assigned to @{username.strip()}")
                self._touch(project, issue.id)

    def _assign(self, project: Project, issue_id: int, username: str) -> bool:
        row = self._conn.execute(
            "SELECT u.id FROM users u JOIN project_members m ON m.user_id = u.id AND m.project_id = ?"
            " WHERE u.username = ?",
            (project.id, username.strip()),
        ).fetchone()
        if row is None:
            raise Refused(f"{username.strip()} is not a member of {project.name}, so cannot be assigned.")
        cursor = self._conn.execute("INSERT OR IGNORE INTO issue_assignees (issue_id, user_id) VALUES (?, ?)",
                                    (issue_id, row[0]))
        return cursor.rowcount > 0

    # Projects

    def add_member(self, project: Project, user: User, username: str, level: int) -> None:
        self._require(project, user, MAINTAINER, "add members")
        if level == OWNER:
            self._require(project, user, OWNER, "add owners")
        with transaction(self._conn):
            row = self._conn.execute("SELECT id FROM users WHERE username = ?", (username.strip(),)).fetchone()
            if row is None:
                raise Refused(f"There is no user called {username.strip()}.")
            if self._conn.execute("SELECT 1 FROM project_members WHERE project_id = ? AND user_id = ?",
                                  (project.id, row[0])).fetchone():
                raise Refused(f"{username.strip()} is already a member of {project.name}.")
            self._conn.execute(
                "INSERT INTO project_members (project_id, user_id, access_level, created_at) VALUES (?, ?, ?, ?)",
                (project.id, row[0], level, self._now),
            )
            self._touch(project)

    def set_todo(self, user: User, issue: Issue, pending: bool) -> None:
        """Adds the issue to the user's to-do list or marks it done; anyone signed in who can see it may."""
        self._mark("todos", "issue_id", issue.id, user, pending)

    def star(self, project: Project, user: User, starred: bool) -> None:
        """Starring twice keeps one star; unstarring an unstarred project does nothing."""
        self._mark("stars", "project_id", project.id, user, starred)

    def _mark(self, table: str, column: str, key: int, user: User, on: bool) -> None:
        """A user's mark on a row (a star, a to-do): set once however often it is set, removed if there."""
        if on:
            self._conn.execute(f"INSERT OR IGNORE INTO {table} ({column}, user_id, created_at) VALUES (?, ?, ?)",
                               (key, user.id, self._now))
        else:
            self._conn.execute(f"DELETE FROM {table} WHERE {column} = ? AND user_id = ?", (key, user.id))
