"""Writes the task suite of the sandbox tracker ("gitlab" in task configs): tasks/dev/gitlab.json and
tasks/test/gitlab.json, in WebArena's task-config format with our `db_check`, `split` and `reference_solution`.

Every reference answer and expected row is read from a freshly seeded database (the default seed) through
TrackerQueries or SQL, never typed in by hand. Deterministic: running it again rewrites identical files.

    .venv/bin/python scripts/tasks/make_gitlab_tasks.py [OUT_DIR]   # OUT_DIR defaults to the repository's tasks/
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from branchwise.harness.authoring import Step, dumps, fill, sql_text, step
from branchwise.sandbox.tracker import DEFAULT_SEED, DEMO_USER, IssueFilter, TrackerQueries, create_tracker_database
from branchwise.sandbox.tracker.models import Issue, Member, Project
from branchwise.sandbox.tracker.schema import ACCESS_LEVELS

SITE = "gitlab"
HOME = "__GITLAB__"
FIRST_ID = 3001
REPO = Path(__file__).resolve().parents[2]
Json = dict[str, Any]


@dataclass
class Template:
    template_id: int
    intent_template: str
    # Each instantiation: (values for the placeholders, the task's eval and solution, filled in by `make`).
    instances: list[tuple[dict[str, str], Json, list[Step], str]] = field(default_factory=list)
    require_login: bool = False


def string_eval(answers: Json, note: str = "", raw: str | None = None) -> Json:
    return {"eval_types": ["string_match"], "reference_answers": answers, "reference_url": "", "program_html": [],
            "string_note": note, "reference_answer_raw_annotation": raw}


def url_eval(url: str) -> Json:
    return {"eval_types": ["url_match"], "reference_answers": None, "reference_url": url, "program_html": [],
            "url_note": "GOLD in PRED"}


def db_eval(query: str, rows: list[list[Any]]) -> Json:
    return {"eval_types": ["db_check"], "reference_answers": None, "reference_url": "", "program_html": [],
            "db_check": [{"site": SITE, "query": query, "rows": rows}]}


def project_where(project: Project, alias: str = "p") -> str:
    return f"{alias}.namespace = {sql_text(project.namespace)} AND {alias}.path = {sql_text(project.path)}"


def issue_where(project: Project, iid: int) -> str:
    return (f"i.project_id = (SELECT p.id FROM projects p WHERE {project_where(project)}) AND i.iid = {iid}")


def open_project(project: Project) -> list[Step]:
    """From the home page (Explore, or "Your projects" when signed in): filter by name and open the project."""
    return [step("type", "searchbox", "Filter by name", project.name, enter=True),
            step("click", "link", f"{project.namespace} / {project.name}")]


def open_issue(project: Project, issue: Issue) -> list[Step]:
    """From the project: its open issues, searched by title, then the issue."""
    return [*open_project(project), step("click", "link", f"Issues {project.open_issues_count}"),
            step("type", "searchbox", "Search or filter results", issue.title, enter=True),
            step("click", "link", issue.title)]


class Suite:
    def __init__(self, db: Path) -> None:
        self.db = db
        self.q = TrackerQueries(db)
        self.projects = sorted(self.q.projects(), key=lambda p: p.full_path)  # public ones, as visitors see them
        names = [p.name.lower() for p in self.q.projects(viewer_username=DEMO_USER.username)]
        self.unique = [p for p in self.projects if names.count(p.name.lower()) == 1]
        self.trail_map = self.q.project("byteblaze/trail-map")

    def sql(self, query: str) -> list[list[Any]]:
        with sqlite3.connect(self.db) as conn:
            return [list(row) for row in conn.execute(query).fetchall()]

    def others(self, count: int, keep: Callable[[Project], bool]) -> list[Project]:
        """`count` public projects other than Trail Map with a name of their own, in path order, that `keep`."""
        return [p for p in self.unique if p.full_path != self.trail_map.full_path and keep(p)][:count]

    def single_title(self, project: Project, issue: Issue) -> bool:
        titles = [i.title for i in self.q.issues(project.full_path, IssueFilter(state="all"))]
        return titles.count(issue.title) == 1

    def writable(self, minimum: int, keep: Callable[[Project], bool] = lambda p: True) -> list[Project]:
        """Projects where the demo user has at least this access level (and `keep`), Trail Map first, then by
        path."""
        found = [p for p in self.q.projects(viewer_username=DEMO_USER.username)
                 if (self.q.role(p.full_path, DEMO_USER.username) or "") in
                 [ACCESS_LEVELS[level] for level in ACCESS_LEVELS if level >= minimum] and keep(p)]
        return sorted(found, key=lambda p: (p.full_path != self.trail_map.full_path, p.full_path))

    # Information seeking

    def open_issue_count(self) -> Template:
        t = Template(301, "How many open issues does the {{project}} project have?")
        for p in [self.trail_map, *self.others(2, lambda p: p.open_issues_count > 0)]:
            n = str(p.open_issues_count)
            t.instances.append(({"project": p.name}, string_eval({"exact_match": n}), open_project(p), n))
        missing = "Weather Station"
        assert not self.q.projects(name=missing, viewer_username=DEMO_USER.username)
        t.instances.append(({"project": missing}, string_eval(
            {"fuzzy_match": "N/A"}, f"There is no project called {missing} on the site."),
            [step("type", "searchbox", "Filter by name", missing, enter=True)], "N/A"))
        return t

    def assignee(self) -> Template:
        t = Template(302, 'Who is assigned to the issue "{{title}}" in the {{project}} project?')

        def candidates(p: Project) -> list[Issue]:
            return [i for i in self.q.issues(p.full_path) if len(i.assignees) == 1 and self.single_title(p, i)]

        picks = [(self.trail_map, candidates(self.trail_map)[-1])]
        picks += [(p, candidates(p)[0]) for p in self.others(2, lambda p: bool(candidates(p)))]
        for p, issue in picks:
            who = issue.assignees[0].name
            t.instances.append(({"title": issue.title, "project": p.name},
                                string_eval({"must_include": [who]}, raw=f"{who} (@{issue.assignees[0].username})"),
                                open_issue(p, issue), who))
        missing = "Add a dark mode to the elevation chart"
        assert not self.q.issues(self.trail_map.full_path, IssueFilter(state="all", search=missing))
        t.instances.append(({"title": missing, "project": self.trail_map.name}, string_eval(
            {"fuzzy_match": "N/A"}, f'Trail Map has no issue titled "{missing}".'),
            [*open_project(self.trail_map), step("click", "link", f"Issues {self.trail_map.open_issues_count}"),
             step("click", "link", f"All {self.q.issue_count(self.trail_map.full_path, 'all')}"),
             step("type", "searchbox", "Search or filter results", missing, enter=True)], "N/A"))
        return t

    def milestone_open_issues(self) -> Template:
        t = Template(303, "How many open issues are in the {{milestone}} milestone of the {{project}} project?")

        def active(p: Project) -> list[Any]:
            return [m for m in self.q.milestones(p.full_path, "active") if m.open_issues_count > 0]

        picks = [(p, active(p)[0]) for p in [self.trail_map, *self.others(2, lambda p: bool(active(p)))]]
        for p, milestone in picks:
            n = str(milestone.open_issues_count)
            t.instances.append(({"milestone": milestone.title, "project": p.name}, string_eval({"exact_match": n}),
                                [*open_project(p), step("click", "link", "Milestones")], n))
        missing = "v3.0"
        assert missing not in [m.title for m in self.q.milestones(self.trail_map.full_path)]
        t.instances.append(({"milestone": missing, "project": self.trail_map.name}, string_eval(
            {"fuzzy_match": "N/A"}, f"Trail Map has no milestone called {missing}."),
            [*open_project(self.trail_map), step("click", "link", "Milestones"), step("click", "link", "All")],
            "N/A"))
        return t

    def member_role(self) -> Template:
        t = Template(304, "What role does {{name}} have in the {{project}} project?")
        seen: set[str] = set()
        picks: list[tuple[Project, Member]] = []
        for p in [self.trail_map, *self.unique]:
            for m in self.q.members(p.full_path):
                if m.role not in seen and m.role != "Owner" and p.full_path not in {x[0].full_path for x in picks}:
                    seen.add(m.role)
                    picks.append((p, m))
            if len(picks) == 3:
                break
        for p, m in picks:
            t.instances.append(({"name": m.user.name, "project": p.name}, string_eval({"exact_match": m.role}),
                                [*open_project(p), step("click", "link", "Members")], m.role))
        return t

    def merged_count(self) -> Template:
        t = Template(305, "How many merge requests of the {{project}} project have been merged?")
        for p in self.others(3, lambda p: bool(self.q.merge_requests(p.full_path, "merged"))):
            n = len(self.q.merge_requests(p.full_path, "merged"))
            mrs = f"Merge requests {p.open_merge_requests_count}"
            t.instances.append(({"project": p.name}, string_eval({"exact_match": str(n)}),
                                [*open_project(p), step("click", "link", mrs),
                                 step("click", "link", f"Merged {n}")], str(n)))
        return t

    # Navigation

    def label_filter(self) -> Template:
        t = Template(306, "Show me the open issues labelled {{label}} in the {{project}} project")

        def labelled(p: Project) -> list[Any]:
            return [label for label in self.q.labels(p.full_path) if label.open_issues_count > 0]

        picks = [(self.trail_map, next(x for x in labelled(self.trail_map) if x.title == "good first issue"))]
        picks += [(p, labelled(p)[0]) for p in self.others(2, lambda p: bool(labelled(p)))]
        for p, label in picks:
            url = f"{HOME}{p.url}/-/issues?label_name[]={quote(label.title)}"
            t.instances.append(({"label": label.title, "project": p.name}, url_eval(url),
                                [*open_project(p), step("click", "link", f"Issues {p.open_issues_count}"),
                                 step("select_option", "combobox", "Label", label.title),
                                 step("click", "button", "Apply")], ""))
        return t

    def assignee_filter(self) -> Template:
        t = Template(307, "Show me the open issues of the {{project}} project that are assigned to {{name}}")

        def assigned(p: Project) -> list[Any]:
            people = {u.username: u for i in self.q.issues(p.full_path) for u in i.assignees}
            return [people[name] for name in sorted(people)]

        picks = [(self.trail_map, next(u for u in assigned(self.trail_map) if u.username == "tom.baker"))]
        picks += [(p, assigned(p)[0]) for p in self.others(2, lambda p: bool(assigned(p)))]
        for p, user in picks:
            url = f"{HOME}{p.url}/-/issues?assignee_username={quote(user.username)}"
            t.instances.append(({"project": p.name, "name": user.name}, url_eval(url),
                                [*open_project(p), step("click", "link", f"Issues {p.open_issues_count}"),
                                 step("select_option", "combobox", "Assignee", f"{user.name} (@{user.username})"),
                                 step("click", "button", "Apply")], ""))
        return t

    # State changes (signed in as the demo user)

    def close_issue(self) -> Template:
        t = Template(308, 'Close the issue "{{title}}" in the {{project}} project', require_login=True)
        for p in self.writable(20, lambda p: p.open_issues_count >= 2)[:3]:
            issue = [i for i in self.q.issues(p.full_path) if self.single_title(p, i)][-1]
            query = f"SELECT i.state FROM issues i WHERE {issue_where(p, issue.iid)}"
            t.instances.append(({"title": issue.title, "project": p.name}, db_eval(query, [["closed"]]),
                                [*open_issue(p, issue), step("click", "button", "Close issue")], ""))
        return t

    def add_label(self) -> Template:
        t = Template(309, 'Add the label {{label}} to the issue "{{title}}" in the {{project}} project',
                     require_login=True)
        for p in self.writable(20, lambda p: p.open_issues_count >= 2)[:3]:
            issues = [i for i in self.q.issues(p.full_path) if self.single_title(p, i)]
            issue = issues[-2]  # not the one the close task takes
            had = {label.title for label in issue.labels}
            label = next(x for x in self.q.labels(p.full_path) if x.title not in had)
            query = ("SELECT l.title FROM issue_labels il JOIN labels l ON l.id = il.label_id JOIN issues i"
                     f" ON i.id = il.issue_id WHERE {issue_where(p, issue.iid)} ORDER BY l.title")
            rows = [[title] for title in sorted(had | {label.title})]
            t.instances.append(({"label": label.title, "title": issue.title, "project": p.name},
                                db_eval(query, rows),
                                [*open_issue(p, issue), step("select_option", "combobox", "Add a label", label.title),
                                 step("click", "button", "Add label")], ""))
        return t

    def invite_member(self) -> Template:
        t = Template(310, "Invite {{name}} to the {{project}} project as a {{role}}", require_login=True)
        roles = ["Developer", "Reporter", "Maintainer"]
        users = self.sql("SELECT username, name FROM users ORDER BY username")
        for index, p in enumerate(self.writable(40)[:3]):
            members = {m.user.username for m in self.q.members(p.full_path)}
            username, name = next((u, n) for u, n in users[index * 5:] if u not in members)
            role = roles[index]
            level = next(lv for lv, r in ACCESS_LEVELS.items() if r == role)
            query = ("SELECT m.access_level FROM project_members m JOIN users u ON u.id = m.user_id JOIN projects p"
                     f" ON p.id = m.project_id WHERE {project_where(p)} AND u.username = {sql_text(username)}")
            t.instances.append(({"name": f"{name} (@{username})", "project": p.name, "role": role},
                                db_eval(query, [[level]]),
                                [*open_project(p), step("click", "link", "Members"),
                                 step("type", "textbox", "Username", username),
                                 step("select_option", "combobox", "Role", role),
                                 step("click", "button", "Invite")], ""))
        return t

    def star(self) -> Template:
        t = Template(311, "Star the {{project}} project", require_login=True)
        for p in self.others(3, lambda p: not self.q.starred_by(p.full_path, DEMO_USER.username)):
            query = ("SELECT COUNT(*) FROM stars s JOIN users u ON u.id = s.user_id JOIN projects p"
                     f" ON p.id = s.project_id WHERE {project_where(p)}"
                     f" AND u.username = {sql_text(DEMO_USER.username)}")
            t.instances.append(({"project": p.name}, db_eval(query, [[1]]),
                                [step("click", "link", "Explore"), *open_project(p),
                                 step("click", "button", f"Star {p.star_count}")], ""))
        return t

    def new_issue(self) -> Template:
        t = Template(312, 'Open a new issue titled "{{title}}" with the label {{label}} in the {{project}} project',
                     require_login=True)
        titles = ["Offline tiles are not cleared after logout", "Add a health check endpoint",
                  "Document the release checklist"]
        for p, title in zip(self.writable(10, lambda p: bool(self.q.labels(p.full_path)))[:3], titles, strict=True):
            assert not self.q.issues(p.full_path, IssueFilter(state="all", search=title))
            label = self.q.labels(p.full_path)[0].title
            query = ("SELECT i.title, i.state, u.username, l.title FROM issues i JOIN users u ON u.id = i.author_id"
                     " JOIN issue_labels il ON il.issue_id = i.id JOIN labels l ON l.id = il.label_id"
                     f" WHERE i.project_id = (SELECT p.id FROM projects p WHERE {project_where(p)})"
                     f" AND i.title = {sql_text(title)}")
            t.instances.append(({"title": title, "label": label, "project": p.name},
                                db_eval(query, [[title, "opened", DEMO_USER.username, label]]),
                                [*open_project(p), step("click", "link", "New issue"),
                                 step("type", "textbox", "Title (required)", title),
                                 step("click", "checkbox", label), step("click", "button", "Create issue")], ""))
        return t

    def templates(self) -> list[Template]:
        return [self.open_issue_count(), self.assignee(), self.milestone_open_issues(), self.member_role(),
                self.merged_count(), self.label_filter(), self.assignee_filter(), self.close_issue(),
                self.add_label(), self.invite_member(), self.star(), self.new_issue()]


def build(db: Path) -> dict[str, list[Json]]:
    """Every task, split: each template's first instantiation is dev, the rest test."""
    out: dict[str, list[Json]] = {"dev": [], "test": []}
    task_id = FIRST_ID
    for template in Suite(db).templates():
        for index, (values, spec, steps, answer) in enumerate(template.instances):
            split = "dev" if index == 0 else "test"
            out[split].append({
                "task_id": task_id, "sites": [SITE], "require_login": template.require_login, "storage_state": None,
                "start_url": HOME, "geolocation": None, "intent_template": template.intent_template,
                "instantiation_dict": values, "intent": fill(template.intent_template, values),
                "require_reset": False, "eval": spec, "intent_template_id": template.template_id, "split": split,
                "reference_solution": {"steps": steps, "answer": answer},
            })
            task_id += 1
    assert task_id - 1 <= 3099
    return out


def main(argv: Sequence[str]) -> None:
    out_dir = Path(argv[0]) if argv else REPO / "tasks"
    with tempfile.TemporaryDirectory(prefix="gitlab-tasks-") as work:
        db = Path(work) / "gitlab.sqlite3"
        create_tracker_database(db, DEFAULT_SEED)
        suite = build(db)
    for split, tasks in suite.items():
        path = out_dir / split / "gitlab.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(tasks), encoding="utf-8")
        print(f"{path}: {len(tasks)} tasks")


if __name__ == "__main__":
    main(sys.argv[1:])
