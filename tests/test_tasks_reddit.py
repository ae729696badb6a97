"""The forum ("reddit") task suite: the files load and are balanced, the generator reproduces them, and against a
real fresh forum over HTTP every reference holds: url_match addresses answer, reference answers are on the page the
reference solution ends on, and every db_check fails on the fresh database and passes once the solution is replayed
through the site's own forms as the demo user."""

from __future__ import annotations

import contextlib
import importlib.util
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import lxml.html
import pytest

from branchwise.harness.evaluators import clean_answer, db_check, url_match
from branchwise.harness.tasks import TaskConfig, load_tasks
from branchwise.sandbox.forum import DEMO_USER, ForumConfig, ForumServer

from test_sandbox_shop import Browser, Page

ROOT = Path(__file__).resolve().parents[1]
FILES = {"dev": ROOT / "tasks" / "dev" / "reddit.json", "test": ROOT / "tasks" / "test" / "reddit.json"}
GENERATOR = ROOT / "scripts" / "tasks" / "make_reddit_tasks.py"
PLACEHOLDER = "__REDDIT__"


def all_tasks() -> list[TaskConfig]:
    return load_tasks(FILES.values())


def by_type(kind: str) -> list[TaskConfig]:
    return [t for t in all_tasks() if kind in t.eval.eval_types]


def answered() -> list[TaskConfig]:
    return [t for t in by_type("string_match") if not t.eval.unachievable]


# The files


def test_files_load_with_unique_ids_matching_splits_and_every_kind_of_task() -> None:
    tasks = all_tasks()
    ids = [t.task_id for t in tasks]
    assert len(ids) == len(set(ids))
    assert all(2001 <= i <= 2099 for i in ids)
    for split, path in FILES.items():
        in_file = load_tasks([path])
        assert in_file and all(t.split == split for t in in_file), path
    assert len(load_tasks([FILES["dev"]])) >= 11
    assert len(load_tasks([FILES["test"]])) >= 22
    for kind in ("string_match", "url_match", "db_check"):
        assert by_type(kind), kind
    unachievable = [t for t in tasks if t.eval.unachievable]
    assert len(unachievable) >= 3
    assert all(t.eval.string_note for t in unachievable)
    for task in tasks:
        assert task.sites == ["reddit"]
        assert task.start_url.startswith(PLACEHOLDER)
        assert task.reference_solution is not None and task.reference_solution.steps, task.task_id
        assert task.intent_template and task.intent_template_id is not None
        assert task.require_login == ("db_check" in task.eval.eval_types), task.task_id
        if "string_match" in task.eval.eval_types:
            assert task.reference_solution.answer, task.task_id
    templates = {t.intent_template_id for t in tasks}
    for split in FILES:
        assert {t.intent_template_id for t in tasks if t.split == split} == templates, split


def test_the_generator_reproduces_the_files_byte_for_byte() -> None:
    spec = importlib.util.spec_from_file_location("make_reddit_tasks", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written: dict[Path, str] = module.build()
    assert {ROOT / path for path in written} == set(FILES.values())
    for path, text in written.items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, path


# Replaying reference solutions over HTTP


def _name(node: lxml.html.HtmlElement) -> str:
    return " ".join(node.text_content().split())


@dataclass
class Replay:
    """Follows a reference solution as a person would: links by their text, fields by their label, buttons by their
    label (submitting their form with its hidden fields, what was typed and the button's own value)."""

    browser: Browser
    page: Page
    typed: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        parsed = urllib.parse.urlparse(self.page.url)
        return parsed.path + (f"?{parsed.query}" if parsed.query else "")

    def _one(self, xpath: str, name: str) -> lxml.html.HtmlElement:
        found = [node for node in self.page.doc.xpath(xpath) if _name(node) == name]
        assert found, f"no {xpath} named {name!r} on {self.page.url}"
        node: lxml.html.HtmlElement = found[0]
        return node

    def _field(self, label: str) -> lxml.html.HtmlElement:
        target = self._one("//label", label).get("for")
        fields = self.page.doc.xpath(f"//*[@id='{target}']")
        assert fields, label
        node: lxml.html.HtmlElement = fields[0]
        return node

    def _submit(self, control: lxml.html.HtmlElement) -> None:
        form = next(control.iterancestors("form"))
        fields: list[tuple[str, str]] = []
        for node in form.xpath(".//input[@name] | .//select[@name] | .//textarea[@name]"):
            name = node.get("name")
            if node.tag == "input" and node.get("type") in ("submit", "button"):
                continue
            if name in self.typed:
                fields.append((name, self.typed[name]))
            elif node.tag == "select":
                chosen = node.xpath(".//option[@selected]") or node.xpath(".//option")
                fields.append((name, chosen[0].get("value", "") if chosen else ""))
            elif node.tag == "textarea":
                fields.append((name, node.text or ""))
            else:
                fields.append((name, node.get("value", "")))
        if control.tag == "button" and control.get("name"):
            fields.append((control.get("name", ""), control.get("value", "")))
        action = form.get("action") or self.path
        self.typed = {}
        if form.get("method", "get").lower() == "post":
            self.page = self.browser.post(action, dict(fields))
        else:
            self.page = self.browser.get(f"{action}?{urllib.parse.urlencode(fields)}")

    def run(self, task: TaskConfig) -> Page:
        assert task.reference_solution is not None
        self.goto(task.start_url)
        for step in task.reference_solution.steps:
            if step.action == "goto":
                self.goto(step.text or "")
            elif step.action == "click" and step.role == "link":
                self.page = self.browser.get(self._one("//a[@href]", step.name or "").get("href", ""))
                self.typed = {}
            elif step.action == "click" and step.role == "button":
                self._submit(self._one("//button", step.name or ""))
            elif step.action == "type":
                node = self._field(step.name or "")
                self.typed[node.get("name", "")] = step.text or ""
                if step.enter:
                    self._submit(node)
            elif step.action == "select_option":
                node = self._field(step.name or "")
                options = [o for o in node.xpath(".//option") if (o.text or "").strip() == step.text]
                assert options, f"task {task.task_id}: no option {step.text!r} in {step.name!r}"
                self.typed[node.get("name", "")] = options[0].get("value", "")
            else:
                raise AssertionError(f"task {task.task_id}: the replay has no {step.action} step")
            assert self.page.status == 200, (task.task_id, step, self.page.url)
        return self.page

    def goto(self, url: str) -> None:
        self.page = self.browser.get(url.replace(PLACEHOLDER, ""))


@dataclass(frozen=True)
class Site:
    base_url: str
    db_path: Path

    def replay(self, task: TaskConfig) -> Page:
        browser = Browser(self.base_url)
        if task.require_login:
            signed_in = browser.post("/login", {"username": DEMO_USER.username, "password": DEMO_USER.password})
            assert signed_in.status == 200
        return Replay(browser, browser.get("/")).run(task)


@contextlib.contextmanager
def fresh_site(folder: Path) -> Iterator[Site]:
    config = ForumConfig(db_path=folder / "reddit.sqlite3", port=0)
    with ForumServer(config) as server:
        yield Site(server.base_url, config.db_path)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with fresh_site(tmp_path_factory.mktemp("reddit-read")) as started:
        yield started


@pytest.mark.parametrize("task", by_type("url_match"), ids=lambda t: str(t.task_id))
def test_reference_urls_answer_and_the_solution_ends_on_them(site: Site, task: TaskConfig) -> None:
    reference = (task.eval.reference_url or "").replace(PLACEHOLDER, site.base_url)
    for url in reference.split(" |OR| "):
        assert Browser("").get(url.strip()).status == 200, url
    final = site.replay(task)
    assert url_match(reference, final.url) == 1.0, (final.url, reference)


@pytest.mark.parametrize("task", answered(), ids=lambda t: str(t.task_id))
def test_reference_answers_are_on_the_page_the_solution_ends_on(site: Site, task: TaskConfig) -> None:
    refs = task.eval.reference_answers
    assert refs is not None and task.reference_solution is not None
    expected = [refs.exact_match] if refs.exact_match is not None else list(refs.must_include or [])
    assert expected and task.reference_solution.answer in expected
    text = clean_answer(site.replay(task).text())
    for answer in expected:
        assert clean_answer(answer) in text, (task.task_id, answer, site.replay(task).url)


def test_unachievable_solutions_run_and_find_nothing(site: Site) -> None:
    for task in [t for t in all_tasks() if t.eval.unachievable]:
        assert task.reference_solution is not None and task.reference_solution.answer == "N/A"
        browser = Browser(site.base_url)
        replay = Replay(browser, browser.get("/"))
        replay.goto(task.start_url)
        for step in task.reference_solution.steps:
            if step.action == "goto":
                page = browser.get((step.text or "").replace(PLACEHOLDER, ""))
                assert page.status == 404, (task.task_id, step)
        # The missing thing is named in the intent; the steps that browse must still work.
        if all(step.action != "goto" for step in task.reference_solution.steps):
            replay.run(task)


def test_db_checks_fail_on_a_fresh_forum_and_pass_after_the_reference_solution(tmp_path: Path) -> None:
    tasks = by_type("db_check")
    for task in tasks:
        with fresh_site(tmp_path / str(task.task_id)) as fresh:
            assert db_check(task.eval.db_check, {"reddit": fresh.db_path}) == 0.0, task.task_id
            fresh.replay(task)
            assert db_check(task.eval.db_check, {"reddit": fresh.db_path}) == 1.0, task.task_id
