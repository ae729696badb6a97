"""The tracker's ("gitlab") task suite: the files load, the generator reproduces them, and against a real fresh tracker
every reference holds: replaying each reference solution over HTTP (links followed, GET forms submitted, the final
POST form posted as the demo user) ends on a page showing the answer, on a URL the url_match reference accepts, or
with a database that passes the db_check it failed before."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urljoin, urlparse

import lxml.html
import pytest

from branchwise.harness.evaluators import db_check, tokens, url_match
from branchwise.harness.tasks import SolutionStep, TaskConfig, load_tasks
from branchwise.sandbox.tracker import DEMO_USER, TrackerConfig, TrackerServer

from test_sandbox_shop import Browser, Page

REPO = Path(__file__).resolve().parents[1]
GENERATOR = REPO / "scripts" / "tasks" / "make_gitlab_tasks.py"
FILES = {"dev": REPO / "tasks" / "dev" / "gitlab.json", "test": REPO / "tasks" / "test" / "gitlab.json"}


def tasks_of(split: str) -> list[TaskConfig]:
    return load_tasks([FILES[split]])


ALL = tasks_of("dev") + tasks_of("test")
READING = [t for t in ALL if not t.require_login]
CHANGING = [t for t in ALL if t.require_login]


def kind(task: TaskConfig) -> str:
    return "unachievable" if task.eval.unachievable else task.eval.eval_types[0]


# The files


def test_files_load_with_unique_ids_and_matching_splits() -> None:
    ids = [t.task_id for t in ALL]
    assert len(ids) == len(set(ids))
    assert all(3001 <= i <= 3099 for i in ids)
    for split in FILES:
        assert all(t.split == split for t in tasks_of(split))
    assert len(tasks_of("dev")) >= 11 and len(tasks_of("test")) >= 22
    kinds = [kind(t) for t in ALL]
    assert {"string_match", "url_match", "db_check", "unachievable"} <= set(kinds)
    assert kinds.count("unachievable") >= 3
    for task in ALL:
        assert task.sites == ["gitlab"] and task.start_url.startswith("__GITLAB__")
        assert task.reference_solution is not None and task.reference_solution.steps
        assert task.require_login == (task.eval.eval_types == ["db_check"])
        assert "{{" not in task.intent and task.intent_template and task.intent_template_id is not None
    templates = {t.intent_template_id for t in ALL}
    assert 8 <= len(templates) <= 12
    for split in FILES:
        assert {t.intent_template_id for t in tasks_of(split)} == templates


def test_the_generator_rewrites_identical_files(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATOR), str(tmp_path)], check=True, capture_output=True, timeout=300)
    for split, path in FILES.items():
        assert (tmp_path / split / "gitlab.json").read_bytes() == path.read_bytes(), split


# Replaying the reference solutions over HTTP


def _text(node: lxml.html.HtmlElement) -> str:
    return " ".join(node.text_content().split())


class Replay:
    """Follows a reference solution as a person would, by role and accessible name: links are followed, typed and
    selected values fill the form they belong to, Enter or a button submits it (GET by URL, POST as a form)."""

    def __init__(self, browser: Browser, start: str) -> None:
        self.browser = browser
        self.page = browser.get(start)
        self.values: dict[str, list[str]] = {}
        self.posted: Page | None = None

    @property
    def doc(self) -> lxml.html.HtmlElement:
        return self.page.doc

    def run(self, steps: list[SolutionStep]) -> Replay:
        for number, step in enumerate(steps):
            assert self.posted is None, f"step {number} comes after the form was posted"
            assert self.page.status == 200, (number, step, self.page.url, self.page.status)
            self.do(step)
        return self

    def do(self, step: SolutionStep) -> None:
        if step.action == "goto":
            self.page = self.browser.get(urlparse(step.text or "").path)
        elif step.action == "click" and step.role == "link":
            links = [a for a in self.doc.iter("a") if _text(a) == step.name]
            assert links, f"no link {step.name!r} on {self.page.url}"
            self.open(urljoin(self.page.url, links[0].get("href")))
        elif step.action in ("type", "select_option"):
            field = self.labelled(step.name or "")
            value = step.text or ""
            if field.tag == "select":
                options = [o for o in field.iter("option") if _text(o) == value]
                assert options, f"{step.name!r} has no option {value!r}"
                value = options[0].get("value", _text(options[0]))
            self.values[field.get("name")] = [value]
            if step.enter:
                self.submit(self.form_of(field))
        elif step.action == "click" and step.role == "checkbox":
            box = self.labelled(step.name or "")
            self.values.setdefault(box.get("name"), []).append(box.get("value"))
        elif step.action == "click" and step.role == "button":
            buttons = [b for b in self.doc.iter("button") if _text(b) == step.name]
            assert buttons, f"no button {step.name!r} on {self.page.url}"
            self.submit(self.form_of(buttons[0]))
        else:
            raise AssertionError(f"the replay does not know {step}")

    def open(self, url: str) -> None:
        parsed = urlparse(url)
        self.page = self.browser.get(parsed.path + (f"?{parsed.query}" if parsed.query else ""))
        self.values = {}

    def labelled(self, name: str) -> lxml.html.HtmlElement:
        labels = [label for label in self.doc.iter("label") if _text(label) == name]
        assert labels, f"no field labelled {name!r} on {self.page.url}"
        found = self.doc.get_element_by_id(labels[0].get("for"))
        assert found is not None
        return found

    def form_of(self, node: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
        form = next(iter(node.iterancestors("form")), None)
        assert form is not None, "the control is in no form"
        return form

    def submit(self, form: lxml.html.HtmlElement) -> None:
        pairs: list[tuple[str, str]] = []
        for field in form.iter("input", "select", "textarea"):
            name = field.get("name")
            if not name or field.get("type") == "checkbox":
                continue
            if name in self.values:
                pairs.extend((name, value) for value in self.values[name])
            elif field.tag == "select":
                options = list(field.iter("option"))
                chosen = [o for o in options if o.get("selected") is not None] or options[:1]
                pairs.extend((name, o.get("value", "")) for o in chosen)
            else:
                pairs.append((name, field.get("value", "") or ""))
        pairs.extend((name, value) for name, values in self.values.items() for value in values
                     if name not in {p[0] for p in pairs})
        action = urljoin(self.page.url, form.get("action") or self.page.url)
        if (form.get("method") or "get").lower() == "post":
            self.posted = post_pairs(self.browser, urlparse(action).path, pairs)
            self.page = self.posted
        else:
            self.open(f"{urlparse(action).path}?{urlencode(pairs)}")


def post_pairs(browser: Browser, path: str, pairs: list[tuple[str, str]]) -> Page:
    """A form post that may repeat a field (several checked boxes); `Browser.post` takes a dict."""
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(browser.jar),
                                         urllib.request.ProxyHandler({}))
    request = urllib.request.Request(browser.base_url + path, data=urlencode(pairs).encode(), method="POST")
    try:
        with opener.open(request, timeout=10) as response:
            return Page(response.status, response.url, response.read().decode(), response.headers)
    except urllib.error.HTTPError as error:
        return Page(error.code, error.url, error.read().decode(), error.headers)


@pytest.fixture(scope="module")
def reading_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrackerServer]:
    config = TrackerConfig(db_path=tmp_path_factory.mktemp("gitlab-read") / "gitlab.sqlite3")
    with TrackerServer(config) as server:
        yield server


def resolve(url: str, server: TrackerServer) -> str:
    return url.replace("__GITLAB__", server.base_url)


def start_path(task: TaskConfig, server: TrackerServer) -> str:
    return urlparse(resolve(task.start_url, server)).path or "/"


@pytest.mark.parametrize("task", READING, ids=lambda t: str(t.task_id))
def test_reference_solution_ends_on_the_answer_or_the_reference_url(reading_site: TrackerServer,
                                                                     task: TaskConfig) -> None:
    assert task.reference_solution is not None
    replay = Replay(Browser(reading_site.base_url), start_path(task, reading_site)).run(task.reference_solution.steps)
    assert replay.page.status == 200 and replay.posted is None
    refs, answer = task.eval.reference_answers, task.reference_solution.answer
    if task.eval.unachievable:
        assert answer == "N/A" and task.eval.string_note
        values = task.instantiation_dict
        missing = str(values.get("title") or values.get("milestone") or values["project"])
        names = {_text(a) for a in replay.doc.iter("a")}
        assert not any(missing in name for name in names), f"{missing!r} is on {replay.page.url}"
    elif task.eval.eval_types == ["url_match"]:
        reference = resolve(task.eval.reference_url or "", reading_site)
        assert url_match(reference, replay.page.url) == 1.0, (reference, replay.page.url)
        for url in reference.split(" |OR| "):
            assert Browser(reading_site.base_url).get(url.removeprefix(reading_site.base_url)).status == 200
    else:
        assert refs is not None
        text = _text(replay.doc.body)
        if refs.exact_match is not None:
            assert answer == refs.exact_match
            assert answer.lower() in [t.lower() for t in tokens(text)] and answer in text, (answer, replay.page.url)
        for item in refs.must_include or []:
            assert item in answer and item in text, (item, replay.page.url)


@pytest.mark.parametrize("task", CHANGING, ids=lambda t: str(t.task_id))
def test_change_fails_its_db_check_before_and_passes_after_the_posted_form(tmp_path: Path, task: TaskConfig) -> None:
    """Each task on a site of its own, as the harness runs it: the demo user signed in first."""
    database = tmp_path / "gitlab.sqlite3"
    with TrackerServer(TrackerConfig(db_path=database)) as site:
        databases = {"gitlab": database}
        assert db_check(task.eval.db_check, databases) == 0.0
        browser = Browser(site.base_url)
        signed_in = browser.post("/users/sign_in", {"login": DEMO_USER.username, "password": DEMO_USER.password,
                                                    "redirect_to": "/"})
        assert signed_in.status == 200 and f"@{DEMO_USER.username}" in signed_in.text()
        assert task.reference_solution is not None and task.reference_solution.answer == ""
        replay = Replay(browser, start_path(task, site)).run(task.reference_solution.steps)
        assert replay.posted is not None and replay.posted.status == 200, replay.page.url
        assert 'role="alert"' not in replay.posted.html, replay.posted.text()[:300]
        assert db_check(task.eval.db_check, databases) == 1.0
