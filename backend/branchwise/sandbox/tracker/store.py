"""Read access to the tracker: people, projects (as a given viewer may see them), issues, notes and merge requests.

Every listing ends its ORDER BY in a unique column, so paging never shows a row twice or skips one.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from ..catalog import search_terms
from ..passwords import verify_password
from .models import Issue, Label, ListPage, Member, MergeRequest, Milestone, Note, Project, Session, User

_USER_COLUMNS = "id, username, name, email, bio, created_at"

# Which projects a viewer (:viewer, a user id or NULL) may see: public ones, internal ones when signed in,
# private ones as a member.
VISIBLE = (
    "(p.visibility = 'public' OR (:viewer IS NOT NULL AND (p.visibility = 'internal' OR EXISTS ("
    "SELECT 1 FROM project_members vm WHERE vm.project_id = p.id AND vm.user_id = :viewer))))"
)
_PROJECT_COLUMNS = """
    p.id, p.namespace, p.path, p.name, p.description, p.visibility, p.default_branch, p.created_at,
    p.last_activity_at,
    (SELECT COUNT(*) FROM stars s WHERE s.project_id = p.id) AS star_count,
    (SELECT COUNT(*) FROM issues i WHERE i.project_id = p.id AND i.state = 'opened') AS open_issues_count,
    (SELECT COUNT(*) FROM merge_requests r WHERE r.project_id = p.id AND r.state = 'opened')
        AS open_merge_requests_count
"""


class ProjectSort(str, Enum):
    """GitLab's `sort=` values on the projects lists."""

    LATEST_ACTIVITY = "latest_activity_desc"
    NAME_ASC = "name_asc"
    NAME_DESC = "name_desc"
    CREATED_DESC = "created_desc"
    CREATED_ASC = "created_asc"
    STARS_DESC = "stars_desc"

    @property
    def label(self) -> str:
        return _PROJECT_SORT_LABELS[self]

    @classmethod
    def parse(cls, value: str | None) -> ProjectSort:
        """Unknown values fall back to the default instead of failing: URLs get hand-edited."""
        try:
            return cls(value) if value else cls.LATEST_ACTIVITY
        except ValueError:
            return cls.LATEST_ACTIVITY


_PROJECT_SORT_LABELS = MappingProxyType({
    ProjectSort.LATEST_ACTIVITY: "Last updated",
    ProjectSort.NAME_ASC: "Name",
    ProjectSort.NAME_DESC: "Name, descending",
    ProjectSort.CREATED_DESC: "Created date",
    ProjectSort.CREATED_ASC: "Oldest created",
    ProjectSort.STARS_DESC: "Most stars",
})
_PROJECT_ORDER = MappingProxyType({
    ProjectSort.LATEST_ACTIVITY: "p.last_activity_at DESC, p.id DESC",
    ProjectSort.NAME_ASC: "p.name COLLATE NOCASE, p.id",
    ProjectSort.NAME_DESC: "p.name COLLATE NOCASE DESC, p.id DESC",
    ProjectSort.CREATED_DESC: "p.created_at DESC, p.id DESC",
    ProjectSort.CREATED_ASC: "p.created_at, p.id",
    ProjectSort.STARS_DESC: "star_count DESC, p.id",
})


class IssueSort(str, Enum):
    """GitLab's `sort=` values on issue lists."""

    CREATED_DESC = "created_date"
    CREATED_ASC = "created_asc"
    UPDATED_DESC = "updated_desc"
    UPDATED_ASC = "updated_asc"
    TITLE_ASC = "title_asc"
    TITLE_DESC = "title_desc"

    @property
    def label(self) -> str:
        return _ISSUE_SORT_LABELS[self]

    @classmethod
    def parse(cls, value: str | None) -> IssueSort:
        try:
            return cls(value) if value else cls.CREATED_DESC
        except ValueError:
            return cls.CREATED_DESC


_ISSUE_SORT_LABELS = MappingProxyType({
    IssueSort.CREATED_DESC: "Created date",
    IssueSort.CREATED_ASC: "Oldest created",
    IssueSort.UPDATED_DESC: "Updated date",
    IssueSort.UPDATED_ASC: "Oldest updated",
    IssueSort.TITLE_ASC: "Title",
    IssueSort.TITLE_DESC: "Title, descending",
})
_ISSUE_ORDER = MappingProxyType({
    IssueSort.CREATED_DESC: "i.created_at DESC, i.id DESC",
    IssueSort.CREATED_ASC: "i.created_at, i.id",
    IssueSort.UPDATED_DESC: "i.updated_at DESC, i.id DESC",
    IssueSort.UPDATED_ASC: "i.updated_at, i.id",
    IssueSort.TITLE_ASC: "i.title COLLATE NOCASE, i.id",
    IssueSort.TITLE_DESC: "i.title COLLATE NOCASE DESC, i.id DESC",
})


@dataclass(frozen=True)
class IssueFilter:
    """The issue list's query parameters. `state` is opened, closed or all; the rest narrow it further.

    `assignee_username` and `milestone_title` also take GitLab's "None" (no assignee / milestone) and "Any".
    """

    state: str = "opened"
    labels: tuple[str, ...] = ()
    assignee_username: str = ""
    author_username: str = ""
    milestone_title: str = ""
    search: str = ""

    def where(self, project_id: int | None) -> tuple[str, list[object]]:
        """SQL conditions over issues `i` (and their project `p`) without the state, and their parameters."""
        clauses: list[str] = []
        params: list[object] = []
        if project_id is not None:
            clauses.append("i.project_id = ?")
            params.append(project_id)
        for label in self.labels:
            clauses.append("EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id"
                           " WHERE il.issue_id = i.id AND l.title = ? COLLATE NOCASE)")
            params.append(label)
        if self.assignee_username in ("None", "Any"):
            negate = "NOT " if self.assignee_username == "None" else ""
            clauses.append(f"{negate}EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id)")
        elif self.assignee_username:
            clauses.append("EXISTS (SELECT 1 FROM issue_assignees ia JOIN users au ON au.id = ia.user_id"
                           " WHERE ia.issue_id = i.id AND au.username = ?)")
            params.append(self.assignee_username)
        if self.author_username:
            clauses.append("i.author_id = (SELECT id FROM users WHERE username = ?)")
            params.append(self.author_username)
        if self.milestone_title in ("None", "Any"):
            clauses.append("i.milestone_id IS NULL" if self.milestone_title == "None" else "i.milestone_id IS NOT NULL")
        elif self.milestone_title:
            clauses.append("i.milestone_id IN (SELECT id FROM milestones WHERE title = ?)")
            params.append(self.milestone_title)
        for term in search_terms(self.search):
            clauses.append("(i.title LIKE ? ESCAPE '\\' OR i.description LIKE ? ESCAPE '\\')")
            params.extend([like_pattern(term)] * 2)
        return " AND ".join(clauses) or "1", params


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _page_bounds(page: int, page_size: int, total: int) -> int:
    """The page actually shown: out-of-range numbers clamp to the nearest real page."""
    last = max(1, -(-total // page_size))
    return min(max(1, page), last)


class Store:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    # People and sessions

    def user(self, user_id: int | None) -> User | None:
        if user_id is None:
            return None
        row = self._conn.execute(f"SELECT {_USER_COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()
        return User(**dict(row)) if row else None

    def user_by_username(self, username: str) -> User | None:
        row = self._conn.execute(f"SELECT {_USER_COLUMNS} FROM users WHERE username = ?", (username,)).fetchone()
        return User(**dict(row)) if row else None

    def authenticate(self, login: str, password: str) -> User | None:
        """`login` is a username or an email address, as on GitLab's sign-in form."""
        row = self._conn.execute(
            "SELECT id, password_hash FROM users WHERE username = ? OR email = ?", (login.strip(), login.strip())
        ).fetchone()
        if row is None or not verify_password(password, row["password_hash"]):
            return None
        return self.user(row["id"])

    def session(self, token: str | None) -> Session | None:
        if not token:
            return None
        row = self._conn.execute("SELECT id, token, user_id FROM sessions WHERE token = ?", (token,)).fetchone()
        return Session(row["id"], row["token"], row["user_id"]) if row else None

    # Projects

    def projects_page(
        self,
        viewer: int | None,
        sort: ProjectSort,
        page: int,
        page_size: int,
        name: str = "",
        member_id: int | None = None,
        namespace: str | None = None,
    ) -> ListPage[Project]:
        where = [VISIBLE]
        params: dict[str, object] = {"viewer": viewer}
        for number, term in enumerate(search_terms(name)):
            where.append(f"(p.name LIKE :t{number} ESCAPE '\\' OR p.path LIKE :t{number} ESCAPE '\\'"
                         f" OR p.namespace LIKE :t{number} ESCAPE '\\' OR p.description LIKE :t{number} ESCAPE '\\')")
            params[f"t{number}"] = like_pattern(term)
        if member_id is not None:
            where.append("EXISTS (SELECT 1 FROM project_members mm WHERE mm.project_id = p.id"
                         " AND mm.user_id = :member)")
            params["member"] = member_id
        if namespace is not None:
            where.append("p.namespace = :namespace")
            params["namespace"] = namespace
        condition = " AND ".join(where)
        total = int(self._conn.execute(f"SELECT COUNT(*) FROM projects p WHERE {condition}", params).fetchone()[0])
        page = _page_bounds(page, page_size, total)
        params.update(limit=page_size, offset=(page - 1) * page_size)
        rows = self._conn.execute(
            f"SELECT {_PROJECT_COLUMNS} FROM projects p WHERE {condition} ORDER BY {_PROJECT_ORDER[sort]}"
            " LIMIT :limit OFFSET :offset",
            params,
        )
        return ListPage(tuple(Project(**dict(row)) for row in rows), total, page, page_size)

    def project(self, namespace: str, path: str, viewer: int | None, everyone: bool = False) -> Project | None:
        """None when it does not exist or the viewer may not see it (GitLab answers 404 for both).

        `everyone` skips the visibility check (reference answers and tests, never pages)."""
        row = self._conn.execute(
            f"SELECT {_PROJECT_COLUMNS} FROM projects p WHERE p.namespace = :namespace AND p.path = :path"
            f" AND {'1' if everyone else VISIBLE}",
            {"namespace": namespace, "path": path, "viewer": viewer},
        ).fetchone()
        return Project(**dict(row)) if row else None

    def access_level(self, project_id: int, user_id: int | None) -> int:
        """0 for non-members and visitors."""
        if user_id is None:
            return 0
        row = self._conn.execute(
            "SELECT access_level FROM project_members WHERE project_id = ? AND user_id = ?", (project_id, user_id)
        ).fetchone()
        return int(row[0]) if row else 0

    def members(self, project_id: int) -> tuple[Member, ...]:
        """Highest role first, then by name."""
        rows = self._conn.execute(
            "SELECT m.user_id, m.access_level, m.created_at FROM project_members m JOIN users u ON u.id = m.user_id"
            " WHERE m.project_id = ? ORDER BY m.access_level DESC, u.name COLLATE NOCASE, u.id",
            (project_id,),
        ).fetchall()
        return tuple(Member(self._user(row["user_id"]), row["access_level"], row["created_at"]) for row in rows)

    def starred(self, project_id: int, user_id: int | None) -> bool:
        return user_id is not None and self._conn.execute(
            "SELECT 1 FROM stars WHERE project_id = ? AND user_id = ?", (project_id, user_id)
        ).fetchone() is not None

    def on_todo_list(self, issue_id: int, user_id: int | None) -> bool:
        return user_id is not None and self._conn.execute(
            "SELECT 1 FROM todos WHERE issue_id = ? AND user_id = ?", (issue_id, user_id)
        ).fetchone() is not None

    def labels(self, project_id: int) -> tuple[Label, ...]:
        rows = self._conn.execute(
            "SELECT l.id, l.title, l.color, l.description, (SELECT COUNT(*) FROM issue_labels il JOIN issues i"
            " ON i.id = il.issue_id WHERE il.label_id = l.id AND i.state = 'opened') AS open_issues_count"
            " FROM labels l WHERE l.project_id = ? ORDER BY l.title COLLATE NOCASE, l.id",
            (project_id,),
        )
        return tuple(Label(**dict(row)) for row in rows)

    def milestones(self, project_id: int, state: str = "all") -> tuple[Milestone, ...]:
        """Soonest due first; `state` is active, closed or all."""
        rows = self._conn.execute(
            "SELECT m.id, m.title, m.description, m.due_date, m.state,"
            " (SELECT COUNT(*) FROM issues i WHERE i.milestone_id = m.id AND i.state = 'opened') AS open_issues_count,"
            " (SELECT COUNT(*) FROM issues i WHERE i.milestone_id = m.id AND i.state = 'closed')"
            " AS closed_issues_count FROM milestones m WHERE m.project_id = ? AND (? = 'all' OR m.state = ?)"
            " ORDER BY m.due_date IS NULL, m.due_date, m.title, m.id",
            (project_id, state, state),
        )
        return tuple(Milestone(**dict(row)) for row in rows)

    # Issues

    def issues_page(
        self, project_id: int | None, filters: IssueFilter, sort: IssueSort, page: int, page_size: int,
        viewer: int | None = None,
    ) -> ListPage[Issue]:
        """A project's issues, or (project_id None) issues across every project the viewer may see."""
        condition, params = self._issue_condition(project_id, filters, viewer)
        if filters.state in ("opened", "closed"):
            condition += " AND i.state = ?"
            params.append(filters.state)
        source = "FROM issues i JOIN projects p ON p.id = i.project_id"
        total = int(self._conn.execute(f"SELECT COUNT(*) {source} WHERE {condition}", params).fetchone()[0])
        page = _page_bounds(page, page_size, total)
        rows = self._conn.execute(
            f"SELECT i.id {source} WHERE {condition} ORDER BY {_ISSUE_ORDER[sort]} LIMIT ? OFFSET ?",
            [*params, page_size, (page - 1) * page_size],
        ).fetchall()
        return ListPage(tuple(self._issue(row[0]) for row in rows), total, page, page_size)

    def issue_counts(self, project_id: int | None, filters: IssueFilter, viewer: int | None = None) -> dict[str, int]:
        """Open, closed and all issues under the filters other than state (the list's tabs)."""
        condition, params = self._issue_condition(project_id, filters, viewer)
        rows = self._conn.execute(
            f"SELECT i.state, COUNT(*) FROM issues i JOIN projects p ON p.id = i.project_id WHERE {condition}"
            " GROUP BY i.state",
            params,
        ).fetchall()
        counts = {"opened": 0, "closed": 0}
        counts.update({row[0]: row[1] for row in rows})
        counts["all"] = counts["opened"] + counts["closed"]
        return counts

    def _issue_condition(
        self, project_id: int | None, filters: IssueFilter, viewer: int | None
    ) -> tuple[str, list[object]]:
        condition, params = filters.where(project_id)
        if project_id is None:
            visible = VISIBLE.replace(":viewer", "?")
            condition += f" AND {visible}"
            params.extend([viewer] * visible.count("?"))
        return condition, params

    def issue(self, project_id: int, iid: int) -> Issue | None:
        row = self._conn.execute("SELECT id FROM issues WHERE project_id = ? AND iid = ?", (project_id, iid)).fetchone()
        return self._issue(row[0]) if row else None

    def _issue(self, issue_id: int) -> Issue:
        row = self._conn.execute(
            "SELECT i.*, p.namespace || '/' || p.path AS full_path,"
            " (SELECT COUNT(*) FROM notes n WHERE n.issue_id = i.id AND n.system = 0) AS comment_count"
            " FROM issues i JOIN projects p ON p.id = i.project_id WHERE i.id = ?",
            (issue_id,),
        ).fetchone()
        labels = tuple(
            Label(**dict(label))
            for label in self._conn.execute(
                "SELECT l.id, l.title, l.color, l.description FROM issue_labels il JOIN labels l ON l.id = il.label_id"
                " WHERE il.issue_id = ? ORDER BY l.title COLLATE NOCASE",
                (issue_id,),
            )
        )
        assignees = tuple(
            self._user(a[0])
            for a in self._conn.execute(
                "SELECT user_id FROM issue_assignees ia JOIN users u ON u.id = ia.user_id WHERE issue_id = ?"
                " ORDER BY u.username",
                (issue_id,),
            )
        )
        milestone = None
        if row["milestone_id"] is not None:
            m = self._conn.execute(
                "SELECT id, title, description, due_date, state FROM milestones WHERE id = ?", (row["milestone_id"],)
            ).fetchone()
            milestone = Milestone(**dict(m))
        return Issue(
            id=row["id"], project_full_path=row["full_path"], iid=row["iid"], title=row["title"],
            description=row["description"], state=row["state"], author=self._user(row["author_id"]),
            milestone=milestone, labels=labels, assignees=assignees, created_at=row["created_at"],
            updated_at=row["updated_at"], closed_at=row["closed_at"], comment_count=row["comment_count"],
        )

    def notes(self, issue_id: int) -> tuple[Note, ...]:
        rows = self._conn.execute(
            "SELECT id, author_id, body, system, created_at FROM notes WHERE issue_id = ? ORDER BY created_at, id",
            (issue_id,),
        ).fetchall()
        return tuple(Note(r["id"], self._user(r["author_id"]), r["body"], bool(r["system"]), r["created_at"])
                     for r in rows)

    # Merge requests

    def merge_requests_page(self, project_id: int, state: str, page: int, page_size: int) -> ListPage[MergeRequest]:
        """Newest first; `state` is opened, merged, closed or all."""
        condition = "project_id = ? AND (? = 'all' OR state = ?)"
        params: list[object] = [project_id, state, state]
        total = int(self._conn.execute(f"SELECT COUNT(*) FROM merge_requests WHERE {condition}", params).fetchone()[0])
        page = _page_bounds(page, page_size, total)
        rows = self._conn.execute(
            f"SELECT * FROM merge_requests WHERE {condition} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, page_size, (page - 1) * page_size],
        ).fetchall()
        items = tuple(
            MergeRequest(r["iid"], r["title"], self._user(r["author_id"]), r["source_branch"], r["target_branch"],
                         r["state"], r["created_at"], r["updated_at"])
            for r in rows
        )
        return ListPage(items, total, page, page_size)

    def merge_request_counts(self, project_id: int) -> dict[str, int]:
        counts = {"opened": 0, "merged": 0, "closed": 0}
        counts.update({
            row[0]: row[1]
            for row in self._conn.execute(
                "SELECT state, COUNT(*) FROM merge_requests WHERE project_id = ? GROUP BY state", (project_id,)
            )
        })
        counts["all"] = sum(counts.values())
        return counts

    def _user(self, user_id: int) -> User:
        found = self.user(user_id)
        if found is None:
            raise LookupError(f"no user {user_id}")
        return found
