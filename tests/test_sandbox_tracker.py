"""The sandbox tracker (GitLab-like) over real HTTP: a real uvicorn server, urllib with a cookie jar, facts read back
from SQLite through TrackerQueries."""

from __future__ import annotations

import math
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from branchwise.sandbox.database import fingerprint
from branchwise.sandbox.tracker import (
    DEMO_USER,
    DEVELOPER_USER,
    MAINTAINER_USER,
    DemoAccount,
    IssueFilter,
    IssueSort,
    ProjectSort,
    TrackerConfig,
    TrackerQueries,
    TrackerServer,
    create_tracker_database,
)
from branchwise.sandbox.tracker.demo_users import TRAIL_MAP_ISSUES

from test_sandbox_shop import Browser, Page

FIXED_NOW = datetime(2025, 6, 15, 12, 0)
PAGE_SIZE = 20
TRAIL_MAP = "byteblaze/trail-map"
PRIVATE = "ana.silva/field-notes"


@dataclass(frozen=True)
class Tracker:
    base_url: str
    db_path: Path
    queries: TrackerQueries

    def browser(self, account: DemoAccount | None = None) -> Browser:
        browser = Browser(self.base_url)
        if account is not None:
            page = sign_in(browser, account.username, account.password)
            assert page.status == 200, page.text()[:300]
        return browser


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tracker]:
    config = TrackerConfig(db_path=tmp_path_factory.mktemp("tracker") / "tracker.sqlite3")
    with TrackerServer(config, clock=lambda: FIXED_NOW) as server:
        yield Tracker(server.base_url, config.db_path, TrackerQueries(config.db_path))


def sign_in(browser: Browser, login: str, password: str, redirect_to: str = "/") -> Page:
    return browser.post("/users/sign_in", {"login": login, "password": password, "redirect_to": redirect_to})


def post_pairs(browser: Browser, path: str, pairs: list[tuple[str, str]]) -> Page:
    """A form post with repeated fields (several checked label boxes), which `Browser.post`'s dict cannot hold."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(browser.jar),
                                         urllib.request.ProxyHandler({}))
    request = urllib.request.Request(browser.base_url + path, data=urllib.parse.urlencode(pairs).encode(),
                                     method="POST")
    try:
        with opener.open(request, timeout=10) as response:
            return Page(response.status, response.url, response.read().decode(), response.headers)
    except urllib.error.HTTPError as error:
        return Page(error.code, error.url, error.read().decode(), error.headers)


def issue_titles(page: Page) -> list[str]:
    return page.texts("//ul[contains(@class, 'issue-list')]//*[contains(@class, 'issue-title')]")


def project_paths(page: Page) -> list[str]:
    return [href.strip("/") for href in page.doc.xpath("//ul[contains(@class, 'project-list')]//h2/a/@href")]


def issue_url(iid: int, project: str = TRAIL_MAP) -> str:
    return f"/{project}/-/issues/{iid}"


# Seeding


def test_same_seed_gives_identical_databases_with_hundreds_of_rows(tmp_path: Path) -> None:
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        create_tracker_database(tmp_path / f"{name}.sqlite3", seed)
    assert fingerprint(tmp_path / "a.sqlite3") == fingerprint(tmp_path / "b.sqlite3")
    assert fingerprint(tmp_path / "a.sqlite3") != fingerprint(tmp_path / "c.sqlite3")

    counts = TrackerQueries(tmp_path / "a.sqlite3").table_counts()
    assert counts["users"] >= 40
    assert counts["projects"] >= 30
    assert counts["issues"] >= 300
    assert counts["notes"] >= 500
    assert counts["merge_requests"] >= 100
    assert counts["labels"] >= 200
    assert counts["milestones"] >= 30
    assert counts["project_members"] >= 100
    assert counts["sessions"] == 0


def test_landmarks_exist_whatever_the_seed(tmp_path: Path) -> None:
    create_tracker_database(tmp_path / "t.sqlite3", 99)
    queries = TrackerQueries(tmp_path / "t.sqlite3")
    assert queries.role(TRAIL_MAP, DEMO_USER.username) == "Owner"
    assert queries.role(TRAIL_MAP, MAINTAINER_USER.username) == "Maintainer"
    assert queries.role(TRAIL_MAP, DEVELOPER_USER.username) == "Developer"
    first = queries.issue(TRAIL_MAP, 1)
    assert first is not None
    title, state, labels, assignee, milestone = TRAIL_MAP_ISSUES[0]
    assert (first.title, first.state, first.milestone.title if first.milestone else "") == (title, state, milestone)
    assert [label.title for label in first.labels] == sorted(labels)
    assert [user.username for user in first.assignees] == [assignee]
    assert queries.issue_count("byteblaze/dotfiles", "all") == 0
    assert queries.project(PRIVATE).visibility == "private"


def test_issue_iids_follow_creation_time(tracker: Tracker) -> None:
    issues = tracker.queries.issues(TRAIL_MAP, IssueFilter(state="all"), IssueSort.CREATED_ASC)
    assert [issue.iid for issue in issues] == list(range(1, len(issues) + 1))


# Reading pages


def test_explore_lists_public_projects_sorted_and_paged(tracker: Tracker) -> None:
    browser = tracker.browser()
    expected = [p.full_path for p in tracker.queries.projects()]
    assert PRIVATE not in expected
    first = browser.get("/explore/projects")
    assert first.status == 200
    assert project_paths(first) == expected[:PAGE_SIZE]
    assert f"of {len(expected)} projects" in first.text()
    assert first.doc.xpath("//nav[@aria-label='Pagination']//a[@rel='next']/@href") == ["/explore/projects?page=2"]

    second = browser.get("/explore/projects?page=2")
    assert project_paths(second) == expected[PAGE_SIZE:2 * PAGE_SIZE]
    assert second.doc.xpath("//nav[@aria-label='Pagination']//a[@aria-current='page']")[0].text_content().endswith("2")

    for sort in (ProjectSort.NAME_ASC, ProjectSort.STARS_DESC, ProjectSort.CREATED_ASC):
        page = browser.get(f"/explore/projects?sort={sort.value}")
        assert project_paths(page) == [p.full_path for p in tracker.queries.projects(sort)][:PAGE_SIZE]
        assert page.doc.xpath("//select[@id='sort']/option[@selected]/@value") == [sort.value]

    named = browser.get("/explore/projects?name=trail")
    assert TRAIL_MAP in project_paths(named)
    assert set(project_paths(named)) == {p.full_path for p in tracker.queries.projects(name="trail")}
    assert project_paths(browser.get("/")) == expected[:PAGE_SIZE]


def test_project_home_shows_facts_and_navigation(tracker: Tracker) -> None:
    project = tracker.queries.project(TRAIL_MAP)
    page = tracker.browser().get(f"/{TRAIL_MAP}")
    assert page.status == 200
    assert page.texts("//h1") == ["Trail Map"]
    nav = page.doc.xpath("//nav[@aria-label='Project navigation']//a/@href")
    for suffix in ("/-/issues", "/-/merge_requests", "/-/labels", "/-/milestones", "/-/project_members"):
        assert f"/{TRAIL_MAP}{suffix}" in nav
    facts = dict(zip(page.texts("//dl/dt"), page.texts("//dl/dd"), strict=True))
    assert facts["Open issues"] == str(project.open_issues_count)
    assert facts["Stars"] == str(project.star_count)
    assert facts["Visibility"] == "Public"


@pytest.mark.parametrize(
    "query, filters",
    [
        ("", IssueFilter()),
        ("?state=closed", IssueFilter(state="closed")),
        ("?state=all", IssueFilter(state="all")),
        ("?state=all&label_name[]=bug", IssueFilter(state="all", labels=("bug",))),
        ("?label_name[]=bug&label_name[]=priority::high", IssueFilter(labels=("bug", "priority::high"))),
        ("?state=all&assignee_username=tom.baker", IssueFilter(state="all", assignee_username="tom.baker")),
        ("?assignee_username=None", IssueFilter(assignee_username="None")),
        ("?state=all&milestone_title=v2.0", IssueFilter(state="all", milestone_title="v2.0")),
        ("?state=all&search=slow", IssueFilter(state="all", search="slow")),
    ],
)
def test_issue_list_filters(tracker: Tracker, query: str, filters: IssueFilter) -> None:
    expected = tracker.queries.issues(TRAIL_MAP, filters)
    assert expected or "None" in query, "the filter should match something in the seeded project"
    page = tracker.browser().get(f"/{TRAIL_MAP}/-/issues{query}")
    assert page.status == 200
    assert issue_titles(page) == [issue.title for issue in expected[:PAGE_SIZE]]
    assert f"of {len(expected)} issue" in page.text()
    current_tab = page.texts("//nav[@aria-label='Issue state']//a[@aria-current='page']")[0]
    assert current_tab.endswith(str(len(expected)))


def test_issue_list_sorts_and_pages(tracker: Tracker) -> None:
    filters = IssueFilter(state="all")
    browser = tracker.browser()
    for sort in IssueSort:
        expected = [issue.title for issue in tracker.queries.issues(TRAIL_MAP, filters, sort)]
        assert len(expected) > PAGE_SIZE
        page1 = browser.get(f"/{TRAIL_MAP}/-/issues?state=all&sort={sort.value}")
        assert issue_titles(page1) == expected[:PAGE_SIZE]
        next_url = page1.doc.xpath("//a[@rel='next']/@href")[0]
        assert "page=2" in next_url
        assert (f"sort={sort.value}" in next_url) is (sort is not IssueSort.CREATED_DESC), "the default is left out"
        page2 = browser.get(next_url)
        assert issue_titles(page2) == expected[PAGE_SIZE:2 * PAGE_SIZE]
    last = math.ceil(tracker.queries.issue_count(TRAIL_MAP, "all") / PAGE_SIZE)
    beyond = browser.get(f"/{TRAIL_MAP}/-/issues?state=all&page={last + 5}")
    assert beyond.status == 200 and issue_titles(beyond)
    assert browser.get(f"/{TRAIL_MAP}/-/issues?page=abc").status == 400


def test_issue_page_shows_details_and_comments(tracker: Tracker) -> None:
    issue = tracker.queries.issue(TRAIL_MAP, 1)
    assert issue is not None
    page = tracker.browser().get(issue_url(1))
    assert page.status == 200
    assert page.texts("//h1") == [issue.title]
    sidebar = page.texts("//aside[@aria-label='Issue details']")[0]
    assert all(label.title in sidebar for label in issue.labels)
    assert all(user.name in sidebar for user in issue.assignees)
    comments = page.doc.xpath("//ol[contains(@class, 'notes')]//article")
    assert len(comments) == len(tracker.queries.comments(TRAIL_MAP, 1))
    assert not page.doc.xpath("//form[contains(@action, '/notes')]"), "visitors get a sign-in link, not a form"
    assert tracker.browser().get(issue_url(9999)).status == 404


def test_merge_requests_by_state(tracker: Tracker) -> None:
    browser = tracker.browser()
    for state in ("opened", "merged", "closed", "all"):
        expected = tracker.queries.merge_requests(TRAIL_MAP, state)
        page = browser.get(f"/{TRAIL_MAP}/-/merge_requests?state={state}")
        assert page.status == 200
        titles = page.texts("//ul[contains(@class, 'issue-list')]//h2")
        assert titles == [mr.title for mr in expected[:PAGE_SIZE]]
        assert f"of {len(expected)} merge request" in page.text()


def test_labels_milestones_and_members_pages(tracker: Tracker) -> None:
    browser = tracker.browser()
    labels = browser.get(f"/{TRAIL_MAP}/-/labels")
    assert labels.texts("//tbody/tr/th") == [label.title for label in tracker.queries.labels(TRAIL_MAP)]
    bug = next(label for label in tracker.queries.labels(TRAIL_MAP) if label.title == "bug")
    assert f"{bug.open_issues_count} open issue" in labels.text()

    milestones = browser.get(f"/{TRAIL_MAP}/-/milestones?state=all")
    assert milestones.texts("//ul[contains(@class, 'milestone-list')]//h2") == ["v1.0", "v2.0"]
    assert browser.get(f"/{TRAIL_MAP}/-/milestones").texts("//ul[contains(@class, 'milestone-list')]//h2") == ["v2.0"]

    members = browser.get(f"/{TRAIL_MAP}/-/project_members")
    rows = dict(zip(members.texts("//tbody/tr/td[1]"), members.texts("//tbody/tr/td[2]"), strict=True))
    assert rows["@byteblaze"] == "Owner" and rows["@ana.silva"] == "Maintainer" and rows["@tom.baker"] == "Developer"
    assert not members.doc.xpath("//form[contains(@action, 'project_members')]"), "visitors cannot invite"


def test_search_finds_projects_and_issues(tracker: Tracker) -> None:
    browser = tracker.browser()
    projects = browser.get("/search?search=trail")
    assert TRAIL_MAP in project_paths(projects)
    issues = browser.get("/search?search=tiles&scope=issues")
    expected = tracker.queries.search_issues("tiles")
    assert issue_titles(issues) == [issue.title for issue in expected[:PAGE_SIZE]]
    assert "Map tiles fail to load on slow connections" in issue_titles(issues)
    assert browser.get("/search").status == 200
    assert project_paths(browser.get("/search?search=field+notes")) == [], "private projects stay hidden"


def test_user_and_group_pages(tracker: Tracker) -> None:
    browser = tracker.browser()
    profile = browser.get(f"/{DEMO_USER.username}")
    assert profile.status == 200
    assert profile.texts("//h1") == [DEMO_USER.name]
    assert TRAIL_MAP in project_paths(profile)
    group = next(p.namespace for p in tracker.queries.projects() if tracker.queries.user(p.namespace) is None)
    group_page = browser.get(f"/{group}")
    assert group_page.status == 200
    assert all(path.startswith(f"{group}/") for path in project_paths(group_page))
    assert browser.get("/no-such-user").status == 404


def test_private_project_only_for_members(tracker: Tracker) -> None:
    assert tracker.browser().get(f"/{PRIVATE}").status == 404
    assert tracker.browser(DEVELOPER_USER).get(f"/{PRIVATE}").status == 404
    assert tracker.browser(MAINTAINER_USER).get(f"/{PRIVATE}").status == 200


# Signing in


def test_sign_in_with_a_demo_user_and_a_wrong_password(tracker: Tracker) -> None:
    browser = tracker.browser()
    wrong = sign_in(browser, DEMO_USER.username, "not-the-password")
    assert wrong.status == 422
    assert "Invalid login or password." in wrong.texts("//*[@role='alert']")[0]
    assert not list(browser.jar)

    page = sign_in(browser, DEMO_USER.email, DEMO_USER.password, redirect_to=f"/{TRAIL_MAP}")
    assert page.status == 200 and page.url.endswith(f"/{TRAIL_MAP}")
    assert DEMO_USER.name in page.texts("//nav[@aria-label='Account']")[0]
    home = browser.get("/")
    assert home.texts("//h1") == ["Your projects"]
    assert TRAIL_MAP in project_paths(home) and "byteblaze/dotfiles" in project_paths(home)

    browser.post("/users/sign_out", {})
    assert "Sign in" in browser.get("/").texts("//nav[@aria-label='Account']")[0]


# Changing state


def test_creating_an_issue_requires_sign_in(tracker: Tracker) -> None:
    before = tracker.queries.issue_count(TRAIL_MAP, "all")
    visitor = tracker.browser()
    form = visitor.get(f"/{TRAIL_MAP}/-/issues/new", follow=False)
    assert form.status == 303 and "/users/sign_in?redirect_to=" in form.headers["location"]
    posted = visitor.post(f"/{TRAIL_MAP}/-/issues", {"title": "Sneaky"}, follow=False)
    assert posted.status == 303 and "/users/sign_in" in posted.headers["location"]
    assert tracker.queries.issue_count(TRAIL_MAP, "all") == before


def test_create_issue_gets_the_next_iid_and_an_empty_title_is_refused(tracker: Tracker) -> None:
    browser = tracker.browser(DEVELOPER_USER)
    latest = tracker.queries.latest_issue(TRAIL_MAP)
    assert latest is not None
    form = browser.get(f"/{TRAIL_MAP}/-/issues/new")
    assert form.doc.xpath("//label[@for='title']") and form.doc.xpath("//input[@id='title'][@required]")

    empty = browser.post(f"/{TRAIL_MAP}/-/issues", {"title": "   ", "description": "kept"})
    assert empty.status == 422
    assert "Title can't be blank." in empty.texts("//*[@role='alert']")[0]
    assert empty.doc.xpath("//textarea[@id='description']")[0].text_content() == "kept"
    assert tracker.queries.latest_issue(TRAIL_MAP) == latest

    created = post_pairs(browser, f"/{TRAIL_MAP}/-/issues", [
        ("title", "Offline mode loses the last viewed trail"), ("description", "Reproduce: go offline."),
        ("labels", "bug"), ("labels", "ui"), ("assignee_username", "ana.silva"), ("milestone_title", "v2.0"),
    ])
    assert created.status == 200
    assert created.url.endswith(issue_url(latest.iid + 1))
    issue = tracker.queries.issue(TRAIL_MAP, latest.iid + 1)
    assert issue is not None
    assert (issue.title, issue.state, issue.author.username) == (
        "Offline mode loses the last viewed trail", "opened", DEVELOPER_USER.username)
    assert [user.username for user in issue.assignees] == ["ana.silva"]
    assert issue.milestone is not None and issue.milestone.title == "v2.0"
    assert issue.created_at == FIXED_NOW.isoformat(timespec="seconds")
    assert [label.title for label in issue.labels] == ["bug", "ui"]
    assert issue.description == "Reproduce: go offline."
    assert created.texts("//h1") == [issue.title]
    listed = browser.get(f"/{TRAIL_MAP}/-/issues")
    assert issue_titles(listed)[0] == issue.title, "newest first"

    unknown_label = post_pairs(browser, f"/{TRAIL_MAP}/-/issues", [("title", "x"), ("labels", "no-such-label")])
    assert unknown_label.status == 422
    assert tracker.queries.latest_issue(TRAIL_MAP) == issue


def test_close_and_reopen(tracker: Tracker) -> None:
    iid = next(i.iid for i in tracker.queries.issues(TRAIL_MAP) if i.author.username != DEVELOPER_USER.username)
    browser = tracker.browser(DEVELOPER_USER)
    closed = browser.post(f"{issue_url(iid)}/close", {})
    assert closed.status == 200 and closed.url.endswith(issue_url(iid))
    issue = tracker.queries.issue(TRAIL_MAP, iid)
    assert issue is not None and issue.state == "closed" and issue.closed_at is not None
    assert closed.doc.xpath("//button[normalize-space()='Reopen issue']")
    assert iid not in [i.iid for i in tracker.queries.issues(TRAIL_MAP)]

    browser.post(f"{issue_url(iid)}/reopen", {})
    issue = tracker.queries.issue(TRAIL_MAP, iid)
    assert issue is not None and issue.state == "opened" and issue.closed_at is None
    assert [n.body for n in tracker.queries.notes(TRAIL_MAP, iid) if n.system][-2:] == ["closed", "reopened"]


def test_comment_on_an_issue(tracker: Tracker) -> None:
    browser = tracker.browser(MAINTAINER_USER)
    before = tracker.queries.comments(TRAIL_MAP, 3)
    page = browser.post(f"{issue_url(3)}/notes", {"note": "I can take this one."})
    assert page.status == 200
    after = tracker.queries.comments(TRAIL_MAP, 3)
    assert len(after) == len(before) + 1
    assert (after[-1].body, after[-1].author.username) == ("I can take this one.", MAINTAINER_USER.username)
    assert "I can take this one." in page.texts("//ol[contains(@class, 'notes')]//article")[-1]

    blank = browser.post(f"{issue_url(3)}/notes", {"note": "  "})
    assert blank.status == 403 and "Comment can't be blank." in blank.text()
    assert len(tracker.queries.comments(TRAIL_MAP, 3)) == len(after)
    visitor = tracker.browser().post(f"{issue_url(3)}/notes", {"note": "anon"}, follow=False)
    assert visitor.status == 303
    assert len(tracker.queries.comments(TRAIL_MAP, 3)) == len(after)


def test_add_a_label_and_an_assignee(tracker: Tracker) -> None:
    browser = tracker.browser(DEVELOPER_USER)
    browser.post(f"{issue_url(4)}/labels", {"label_name": "ui"})
    browser.post(f"{issue_url(4)}/assignees", {"assignee_username": "tom.baker"})
    issue = tracker.queries.issue(TRAIL_MAP, 4)
    assert issue is not None
    assert [label.title for label in issue.labels] == ["documentation", "good first issue", "ui"]
    assert browser.post(f"{issue_url(4)}/labels", {"label_name": "ui"}).status == 200
    relabelled = tracker.queries.issue(TRAIL_MAP, 4)
    assert relabelled is not None and len(relabelled.labels) == 3, "adding a label twice keeps one"
    assert [user.username for user in issue.assignees] == ["tom.baker"]
    unknown = browser.post(f"{issue_url(4)}/labels", {"label_name": "no-such-label"})
    assert unknown.status == 403
    stranger = browser.post(f"{issue_url(4)}/assignees", {"assignee_username": "nobody.at.all"})
    assert stranger.status == 403


def test_adding_members_needs_a_maintainer(tracker: Tracker) -> None:
    candidate = next(u for u in tracker.queries.usernames() if tracker.queries.role(TRAIL_MAP, u) is None)
    members_url = f"/{TRAIL_MAP}/-/project_members"
    refused = tracker.browser(DEVELOPER_USER).post(members_url, {"username": candidate, "access_level": "30"})
    assert refused.status == 403
    assert "Maintainer" in refused.texts("//*[@role='alert']")[0]
    assert tracker.queries.role(TRAIL_MAP, candidate) is None

    maintainer = tracker.browser(MAINTAINER_USER)
    assert maintainer.get(members_url).doc.xpath("//label[@for='username']")
    owner_refused = maintainer.post(members_url, {"username": candidate, "access_level": "Owner"})
    assert owner_refused.status == 403 and tracker.queries.role(TRAIL_MAP, candidate) is None

    added = maintainer.post(members_url, {"username": candidate, "access_level": "Reporter"})
    assert added.status == 200
    assert tracker.queries.role(TRAIL_MAP, candidate) == "Reporter"
    assert f"@{candidate}" in added.texts("//tbody/tr/td[1]")
    again = maintainer.post(members_url, {"username": candidate, "access_level": "Developer"})
    assert again.status == 403 and tracker.queries.role(TRAIL_MAP, candidate) == "Reporter"


def test_star_once(tracker: Tracker) -> None:
    project = "byteblaze/dotfiles"
    browser = tracker.browser(DEVELOPER_USER)
    if tracker.queries.starred_by(project, DEVELOPER_USER.username):
        browser.post(f"/{project}/-/unstar", {})
    before = tracker.queries.star_count(project)
    page = browser.post(f"/{project}/-/star", {})
    assert page.status == 200
    assert page.doc.xpath("//button[@aria-pressed='true']")
    browser.post(f"/{project}/-/star", {})
    assert tracker.queries.star_count(project) == before + 1
    assert tracker.queries.starred_by(project, DEVELOPER_USER.username)
    browser.post(f"/{project}/-/unstar", {})
    assert tracker.queries.star_count(project) == before
    assert tracker.browser().post(f"/{project}/-/star", {}, follow=False).status == 303
    assert tracker.queries.star_count(project) == before


def test_the_to_do_button_adds_the_issue_to_the_list_and_marks_it_done(tracker: Tracker) -> None:
    browser = tracker.browser(DEMO_USER)
    toggle = "//button[@class='js-todo']"
    assert browser.get(issue_url(1)).texts(toggle) == ["Add a to-do item"]
    before = fingerprint(tracker.db_path)
    assert browser.post(issue_url(1) + "/todo", {"todo": "add"}).texts(toggle) == ["Mark as done"]
    assert browser.post(issue_url(1) + "/todo", {"todo": "add"}).texts(toggle) == ["Mark as done"]
    assert browser.get(issue_url(2)).texts(toggle) == ["Add a to-do item"], "one issue's to-do is not another's"
    assert fingerprint(tracker.db_path) != before
    assert browser.post(issue_url(1) + "/todo", {"todo": "done"}).texts(toggle) == ["Add a to-do item"]
    assert fingerprint(tracker.db_path) == before
    assert not tracker.browser().get(issue_url(1)).texts(toggle), "no to-do list without signing in"


def test_get_never_changes_the_database(tracker: Tracker) -> None:
    signed_in = tracker.browser(DEMO_USER)
    before = fingerprint(tracker.db_path)
    paths = [
        "/", "/explore/projects?sort=stars_desc&page=2", f"/{TRAIL_MAP}", f"/{TRAIL_MAP}/-/issues?state=all&page=2",
        f"/{TRAIL_MAP}/-/issues?label_name[]=bug&assignee_username=tom.baker", issue_url(1), issue_url(2),
        f"/{TRAIL_MAP}/-/issues/new", f"/{TRAIL_MAP}/-/merge_requests?state=merged", f"/{TRAIL_MAP}/-/labels",
        f"/{TRAIL_MAP}/-/milestones", f"/{TRAIL_MAP}/-/project_members", "/search?search=crash&scope=issues",
        f"/{DEMO_USER.username}", "/users/sign_in", f"/{PRIVATE}", "/nope/nothing/-/issues",
    ]
    for browser in (signed_in, tracker.browser()):
        for path in paths:
            assert browser.get(path).status in (200, 404)
    assert fingerprint(tracker.db_path) == before
