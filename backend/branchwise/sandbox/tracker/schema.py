"""SQLite schema of the tracker, modelled on the parts of GitLab that WebArena's tasks touch."""

from __future__ import annotations

SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    -- '!' for accounts nobody can sign in to (seeded colleagues); demo users have real PBKDF2 hashes.
    password_hash TEXT NOT NULL,
    bio TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    token TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL
);
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('public', 'internal', 'private')),
    default_branch TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL,
    UNIQUE (namespace, path)
);
CREATE TABLE project_members (
    project_id INTEGER NOT NULL REFERENCES projects(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    -- GitLab's access levels: 10 Guest, 20 Reporter, 30 Developer, 40 Maintainer, 50 Owner.
    access_level INTEGER NOT NULL CHECK (access_level IN (10, 20, 30, 40, 50)),
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE TABLE stars (
    project_id INTEGER NOT NULL REFERENCES projects(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
-- An issue on the user's to-do list (GitLab's "Add a to do"), toggled by a script on the issue page.
CREATE TABLE todos (
    issue_id INTEGER NOT NULL REFERENCES issues(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (issue_id, user_id)
);
CREATE TABLE labels (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    title TEXT NOT NULL,
    color TEXT NOT NULL,
    description TEXT NOT NULL,
    UNIQUE (project_id, title)
);
CREATE TABLE milestones (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    due_date TEXT,
    state TEXT NOT NULL CHECK (state IN ('active', 'closed')),
    UNIQUE (project_id, title)
);
CREATE TABLE issues (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('opened', 'closed')),
    author_id INTEGER NOT NULL REFERENCES users(id),
    milestone_id INTEGER REFERENCES milestones(id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    closed_at TEXT,
    UNIQUE (project_id, iid)
);
CREATE TABLE issue_assignees (
    issue_id INTEGER NOT NULL REFERENCES issues(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    PRIMARY KEY (issue_id, user_id)
);
CREATE TABLE issue_labels (
    issue_id INTEGER NOT NULL REFERENCES issues(id),
    label_id INTEGER NOT NULL REFERENCES labels(id),
    PRIMARY KEY (issue_id, label_id)
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    issue_id INTEGER NOT NULL REFERENCES issues(id),
    author_id INTEGER NOT NULL REFERENCES users(id),
    body TEXT NOT NULL,
    -- 1 for GitLab's system notes ("closed", "added ~bug label"), 0 for comments people wrote.
    system INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX notes_by_issue ON notes(issue_id);
CREATE TABLE merge_requests (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id),
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES users(id),
    source_branch TEXT NOT NULL,
    target_branch TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('opened', 'merged', 'closed')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, iid)
);
"""

ACCESS_LEVELS: dict[int, str] = {10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer", 50: "Owner"}
GUEST, REPORTER, DEVELOPER, MAINTAINER, OWNER = 10, 20, 30, 40, 50


def role_name(level: int) -> str:
    return ACCESS_LEVELS.get(level, "Guest")


def role_level(name: str) -> int | None:
    """"Developer" or "30" -> 30; None for anything else."""
    for level, role in ACCESS_LEVELS.items():
        if name.strip().lower() in (role.lower(), str(level)):
            return level
    return None
