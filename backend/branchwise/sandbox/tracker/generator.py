"""Deterministic generation of the tracker's people, projects, issues, comments and merge requests.

Pure: one `random.Random(seed)` drives every choice in a fixed order, so a seed always yields the same `SeedData`.
Rows are tuples in the column order of `schema.SCHEMA`; `seeding.py` writes them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..passwords import hash_password
from . import demo_users, vocabulary
from .schema import DEVELOPER, GUEST, MAINTAINER, OWNER, REPORTER

PERIOD_START = datetime(2022, 1, 10, 9, 0)
PERIOD_END = datetime(2025, 6, 1, 18, 0)
GENERATED_USERS = 42
ISSUES_PER_PROJECT = (4, 36)
MRS_PER_PROJECT = (1, 14)
Row = tuple[object, ...]


@dataclass
class SeedData:
    """Rows per table, ready for INSERT."""

    users: list[Row] = field(default_factory=list)
    projects: list[Row] = field(default_factory=list)
    project_members: list[Row] = field(default_factory=list)
    stars: list[Row] = field(default_factory=list)
    labels: list[Row] = field(default_factory=list)
    milestones: list[Row] = field(default_factory=list)
    issues: list[Row] = field(default_factory=list)
    issue_assignees: list[Row] = field(default_factory=list)
    issue_labels: list[Row] = field(default_factory=list)
    notes: list[Row] = field(default_factory=list)
    merge_requests: list[Row] = field(default_factory=list)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


class _Generator:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._data = SeedData()
        self._user_ids: dict[str, int] = {}

    def generate(self) -> SeedData:
        self._users()
        demo = self._user_ids
        self._project(demo_users.TRAIL_MAP, {
            demo[demo_users.DEMO_USER.username]: OWNER,
            demo[demo_users.MAINTAINER_USER.username]: MAINTAINER,
            demo[demo_users.DEVELOPER_USER.username]: DEVELOPER,
        }, landmark_issues=True)
        self._project(demo_users.DOTFILES, {demo[demo_users.DEMO_USER.username]: OWNER}, issue_range=(0, 0),
                      mr_range=(0, 0))
        self._project(demo_users.PRIVATE_NOTES, {demo[demo_users.MAINTAINER_USER.username]: OWNER})
        usernames = list(self._user_ids)
        for name in vocabulary.PROJECT_NAMES:
            namespace = self._rng.choice(vocabulary.GROUPS + tuple(usernames[3:]))
            owner = self._user_ids.get(namespace) or self._rng.randint(1, len(usernames))
            members = {owner: OWNER}
            for user_id in self._rng.sample(range(1, len(usernames) + 1), self._rng.randint(2, 9)):
                members.setdefault(user_id, self._rng.choice((GUEST, REPORTER, DEVELOPER, DEVELOPER, MAINTAINER)))
            visibility = self._rng.choices(("public", "internal", "private"), (8, 1, 1))[0]
            purpose = self._rng.choice(vocabulary.PROJECT_PURPOSES).format(topic=self._rng.choice(vocabulary.TOPICS))
            self._project((namespace, name, name.replace("-", " ").title(), purpose, visibility), members)
        return self._data

    def _moment(self, start: datetime = PERIOD_START, end: datetime = PERIOD_END) -> datetime:
        seconds = int((end - start).total_seconds())
        return start + timedelta(seconds=self._rng.randint(0, max(0, seconds)))

    def _users(self) -> None:
        rng = self._rng
        for account in demo_users.DEMO_ACCOUNTS:
            salt = f"{rng.getrandbits(64):016x}"
            self._add_user(account.username, account.name, account.email, hash_password(account.password, salt),
                           account.bio)
        while len(self._user_ids) < len(demo_users.DEMO_ACCOUNTS) + GENERATED_USERS:
            first, last = rng.choice(vocabulary.FIRST_NAMES), rng.choice(vocabulary.LAST_NAMES)
            username = rng.choice((f"{first}.{last}", f"{first[0]}{last}", f"{first}{last[:3]}")).lower()
            if username in self._user_ids:
                continue
            self._add_user(username, f"{first} {last}", f"{username}@example.com", "!", rng.choice(vocabulary.BIOS))

    def _add_user(self, username: str, name: str, email: str, password_hash: str, bio: str) -> None:
        user_id = len(self._user_ids) + 1
        self._user_ids[username] = user_id
        joined = self._moment(PERIOD_START - timedelta(days=700), PERIOD_START)
        self._data.users.append((user_id, username, name, email, password_hash, bio, _iso(joined)))

    def _project(
        self,
        spec: tuple[str, str, str, str, str],
        members: dict[int, int],
        landmark_issues: bool = False,
        issue_range: tuple[int, int] = ISSUES_PER_PROJECT,
        mr_range: tuple[int, int] = MRS_PER_PROJECT,
    ) -> None:
        rng, data = self._rng, self._data
        project_id = len(data.projects) + 1
        namespace, path, name, description, visibility = spec
        created = self._moment(PERIOD_START, PERIOD_END - timedelta(days=200))
        for user_id, level in sorted(members.items()):
            data.project_members.append((project_id, user_id, level, _iso(self._moment(created, created
                                                                                         + timedelta(days=30)))))
        label_ids = self._labels(project_id)
        milestone_ids = self._milestones(project_id, created, landmark_issues)
        activity = created
        issues: list[tuple[str, str, tuple[str, ...], str, str]] = []
        if landmark_issues:
            issues.extend(demo_users.TRAIL_MAP_ISSUES)
        issues.extend(self._issue_spec(label_ids, milestone_ids, members)
                      for _ in range(rng.randint(*issue_range)))
        # iids follow creation time, as on GitLab.
        opened = sorted(self._moment(created) for _ in issues)
        for iid, (issue, opened_at) in enumerate(zip(issues, opened, strict=True), start=1):
            activity = max(activity, self._issue(project_id, iid, issue, opened_at, members, label_ids,
                                                 milestone_ids))
        for iid, opened_at in enumerate(sorted(self._moment(created) for _ in range(rng.randint(*mr_range))), 1):
            activity = max(activity, self._merge_request(project_id, iid, opened_at, members))
        for user_id in sorted(rng.sample(range(1, len(self._user_ids) + 1), rng.randint(0, 30))):
            data.stars.append((project_id, user_id, _iso(self._moment(created))))
        data.projects.append((project_id, namespace, path, name, description, visibility, "main", _iso(created),
                              _iso(activity)))

    def _labels(self, project_id: int) -> dict[str, int]:
        chosen = set(self._rng.sample(range(len(vocabulary.LABELS)), self._rng.randint(6, 11)))
        chosen |= {0, 1, 3, 4, 6, 10}  # every project can label bugs, features, docs, priorities and UI
        ids = {}
        for index in sorted(chosen):
            title, color, description = vocabulary.LABELS[index]
            label_id = len(self._data.labels) + 1
            ids[title] = label_id
            self._data.labels.append((label_id, project_id, title, color, description))
        return ids

    def _milestones(self, project_id: int, created: datetime, landmark: bool) -> dict[str, int]:
        if landmark:
            specs = list(demo_users.TRAIL_MAP_MILESTONES)
        else:
            titles = self._rng.sample(vocabulary.MILESTONE_TITLES, self._rng.randint(1, 4))
            specs = []
            for title in titles:
                due = self._moment(created, PERIOD_END + timedelta(days=180)).date()
                specs.append((title, due.isoformat(), "closed" if due < PERIOD_END.date() else "active"))
        ids = {}
        for title, due_date, state in specs:
            milestone_id = len(self._data.milestones) + 1
            ids[title] = milestone_id
            self._data.milestones.append((milestone_id, project_id, title, f"Everything planned for {title}.",
                                          due_date, state))
        return ids

    def _issue_spec(
        self, label_ids: dict[str, int], milestone_ids: dict[str, int], members: dict[int, int]
    ) -> tuple[str, str, tuple[str, ...], str, str]:
        rng = self._rng
        title = rng.choice(vocabulary.ISSUE_TEMPLATES).format(
            component=rng.choice(vocabulary.COMPONENTS), action=rng.choice(vocabulary.ACTIONS),
            feature=rng.choice(vocabulary.FEATURES), setting=rng.choice(vocabulary.SETTINGS),
        )
        title = title[0].upper() + title[1:]
        state = rng.choices(("opened", "closed"), (6, 4))[0]
        labels = tuple(sorted(rng.sample(sorted(label_ids), rng.randint(0, 3))))
        developers = sorted(user_id for user_id, level in members.items() if level >= DEVELOPER)
        usernames = list(self._user_ids)
        assignee = usernames[rng.choice(developers) - 1] if developers and rng.random() < 0.6 else ""
        milestone = rng.choice(sorted(milestone_ids)) if milestone_ids and rng.random() < 0.5 else ""
        return title, state, labels, assignee, milestone

    def _issue(
        self,
        project_id: int,
        iid: int,
        spec: tuple[str, str, tuple[str, ...], str, str],
        opened_at: datetime,
        members: dict[int, int],
        label_ids: dict[str, int],
        milestone_ids: dict[str, int],
    ) -> datetime:
        rng, data = self._rng, self._data
        title, state, labels, assignee, milestone = spec
        issue_id = len(data.issues) + 1
        author = rng.choice(sorted(members)) if rng.random() < 0.7 else rng.randint(1, len(self._user_ids))
        description = " ".join([rng.choice(vocabulary.DESCRIPTION_OPENINGS),
                                *rng.sample(vocabulary.DESCRIPTION_DETAILS, rng.randint(1, 3))])
        updated = opened_at
        for _ in range(rng.randint(0, 5)):
            updated = self._moment(updated, min(PERIOD_END, updated + timedelta(days=40)))
            data.notes.append((len(data.notes) + 1, issue_id, rng.randint(1, len(self._user_ids)),
                               rng.choice(vocabulary.COMMENTS), 0, _iso(updated)))
        closed_at = None
        if state == "closed":
            updated = closed_at = self._moment(updated, min(PERIOD_END, updated + timedelta(days=60)))
            data.notes.append((len(data.notes) + 1, issue_id, author, "closed", 1, _iso(closed_at)))
        data.issues.append((issue_id, project_id, iid, title, description, state, author,
                            milestone_ids.get(milestone), _iso(opened_at), _iso(updated),
                            _iso(closed_at) if closed_at else None))
        if assignee:
            data.issue_assignees.append((issue_id, self._user_ids[assignee]))
        data.issue_labels.extend((issue_id, label_ids[label]) for label in labels)
        return updated

    def _merge_request(self, project_id: int, iid: int, opened_at: datetime, members: dict[int, int]) -> datetime:
        rng = self._rng
        verb, thing = rng.choice(vocabulary.MR_VERBS), rng.choice(vocabulary.MR_OBJECTS)
        branch = f"{rng.choice(vocabulary.BRANCH_PREFIXES)}/{verb.lower().replace(' ', '-')}-" \
                 f"{thing.lower().replace(' ', '-')}-{iid}"
        updated = self._moment(opened_at, min(PERIOD_END, opened_at + timedelta(days=20)))
        state = rng.choices(("opened", "merged", "closed"), (3, 6, 1))[0]
        self._data.merge_requests.append((len(self._data.merge_requests) + 1, project_id, iid, f"{verb} {thing}",
                                          rng.choice(sorted(members)), branch, "main", state, _iso(opened_at),
                                          _iso(updated)))
        return updated


def generate(seed: int) -> SeedData:
    return _Generator(seed).generate()
