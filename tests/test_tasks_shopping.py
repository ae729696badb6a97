"""The sandbox shop's task suite (tasks/*/shopping.json, written by scripts/tasks/make_shopping_tasks.py): well formed,
reproducible, and true on a real freshly seeded shop, checked by replaying each reference solution over HTTP."""

from __future__ import annotations

import asyncio
import http.cookiejar
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import lxml.html
import pytest

from branchwise.harness.evaluators import OR, db_check, string_match, url_match
from branchwise.harness.tasks import SolutionStep, TaskConfig, load_tasks
from branchwise.sandbox import DEMO_USER, ShopConfig, ShopServer

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "scripts" / "tasks" / "make_shopping_tasks.py"
FILES = {split: ROOT / "tasks" / split / "shopping.json" for split in ("dev", "test")}
PLACEHOLDER = "__SHOPPING__"


def all_tasks() -> list[TaskConfig]:
    return load_tasks(FILES.values())


def by_type(kind: str) -> list[TaskConfig]:
    return [t for t in all_tasks() if kind in t.eval.eval_types]


def answer_tasks() -> list[TaskConfig]:
    return [t for t in by_type("string_match") if not t.eval.unachievable]


def ids(tasks: list[TaskConfig]) -> list[str]:
    return [str(t.task_id) for t in tasks]


def test_files_load_with_unique_ids_and_matching_splits() -> None:
    tasks = all_tasks()
    assert len({t.task_id for t in tasks}) == len(tasks)
    for split, path in FILES.items():
        in_file = load_tasks([path])
        assert all(t.split == split for t in in_file), path
        assert all(t.sites == ["shopping"] and t.start_url.startswith(PLACEHOLDER) for t in in_file)
    assert len(load_tasks([FILES["dev"]])) >= 11
    assert len(load_tasks([FILES["test"]])) >= 22
    assert {1001, 1002, 1003} <= {t.task_id for t in load_tasks([FILES["dev"]])}
    assert all(1001 <= t.task_id <= 1099 for t in tasks)
    for kind in ("string_match", "url_match", "db_check"):
        assert by_type(kind), kind
    assert len([t for t in tasks if t.eval.unachievable]) >= 3
    for task in tasks:
        assert task.reference_solution is not None, task.task_id
        assert task.intent_template_id is not None
        if task.eval.db_check:
            assert task.require_login, task.task_id
    # Every template is used in both splits.
    templates = {split: {t.intent_template_id for t in load_tasks([path])} for split, path in FILES.items()}
    assert templates["dev"] == templates["test"]


def test_generator_rewrites_the_files_identically(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(tmp_path)], check=True, cwd=ROOT, timeout=120)
    for split, path in FILES.items():
        assert (tmp_path / "tasks" / split / "shopping.json").read_bytes() == path.read_bytes(), split


# Replaying reference solutions over HTTP.


def _norm(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Page:
    status: int
    url: str
    html: str

    @property
    def doc(self) -> lxml.html.HtmlElement:
        return lxml.html.fromstring(self.html)

    def text(self) -> str:
        return _norm(self.doc.text_content())


@dataclass
class Replay:
    """One visitor following a reference solution: links are followed, forms are filled by their labels and
    submitted as the browser would (GET or POST to their action)."""

    base_url: str
    page: Page | None = None
    # Element id -> value typed or chosen on the current page.
    values: dict[str, str] = field(default_factory=dict)
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def __post_init__(self) -> None:
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                   urllib.request.ProxyHandler({}))

    def resolve(self, url: str) -> str:
        url = url.replace(PLACEHOLDER, self.base_url)
        return urllib.parse.urljoin(self.page.url if self.page else self.base_url + "/", url)

    def open(self, url: str, data: dict[str, str] | None = None) -> Page:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.resolve(url), data=body, method="POST" if body is not None else "GET")
        try:
            with self._opener.open(request, timeout=10) as response:
                self.page = Page(response.status, response.url, response.read().decode())
        except urllib.error.HTTPError as error:
            self.page = Page(error.code, error.url, error.read().decode())
        self.values = {}
        return self.page

    def sign_in(self) -> None:
        page = self.open("/login", {"email": DEMO_USER.email, "password": DEMO_USER.password, "next": "/"})
        assert page.status == 200 and "Sign out" in page.text()

    @property
    def doc(self) -> lxml.html.HtmlElement:
        assert self.page is not None, "no page open"
        return self.page.doc

    def labelled(self, name: str) -> lxml.html.HtmlElement:
        for label in self.doc.iter("label"):
            if _norm(label.text_content()) == name and label.get("for"):
                return self.doc.get_element_by_id(label.get("for"))
        raise AssertionError(f"no control labelled {name!r} on {self.page and self.page.url}")

    def run(self, steps: list[SolutionStep]) -> Page:
        for s in steps:
            self.step(s)
        assert self.page is not None
        return self.page

    def step(self, s: SolutionStep) -> None:
        if s.action == "goto":
            self.open(s.text or "")
        elif s.action == "type" and s.role == "searchbox":
            assert s.enter and s.name == "Search products", s
            self.submit(self.labelled(s.name), {self.labelled(s.name).get("id"): s.text or ""})
        elif s.action == "type":
            self.values[self.labelled(s.name or "").get("id")] = s.text or ""
        elif s.action == "select_option":
            select = self.labelled(s.name or "")
            options = [o for o in select.iter("option") if _norm(o.text_content()) == s.text]
            assert options, f"no option {s.text!r} in {s.name!r}"
            self.values[select.get("id")] = options[0].get("value", "")
        elif s.action == "click" and s.role == "link":
            links = [a for a in self.doc.iter("a") if _norm(a.text_content()) == s.name and a.get("href")]
            assert links, f"no link {s.name!r} on {self.page and self.page.url}"
            self.open(links[0].get("href"))
        elif s.action == "click" and s.role == "radio":
            self.values[self.labelled(s.name or "").get("id")] = "on"
        elif s.action == "click" and s.role == "button":
            buttons = [b for b in self.doc.iter("button") if _norm(b.text_content()) == s.name]
            assert buttons, f"no button {s.name!r} on {self.page and self.page.url}"
            self.submit(buttons[0], dict(self.values))
        else:
            raise AssertionError(f"the replay does not know the step {s}")

    def submit(self, control: lxml.html.HtmlElement, chosen: dict[str, str]) -> None:
        """Submits the form around `control` with its current values, changed by `chosen` (element id -> value)."""
        form = next(a for a in control.iterancestors("form"))
        fields: list[tuple[str, str]] = []
        radios: dict[str, str] = {}
        for element in form.iter("input", "select"):
            name, eid = element.get("name"), element.get("id")
            if not name:
                continue
            if element.tag == "select":
                selected = [o.get("value", "") for o in element.iter("option") if o.get("selected") is not None]
                fields.append((name, chosen.get(eid, selected[0] if selected else "")))
            elif element.get("type") == "radio":
                if eid in chosen:
                    radios[name] = element.get("value", "")
                elif element.get("checked") is not None:
                    radios.setdefault(name, element.get("value", ""))
            else:
                fields.append((name, chosen.get(eid, element.get("value", ""))))
        fields.extend(radios.items())
        action = form.get("action") or (self.page.url if self.page else "/")
        if (form.get("method") or "get").lower() == "post":
            self.open(action, dict(fields))
        else:
            self.open(f"{action}?{urllib.parse.urlencode(fields)}")


@dataclass(frozen=True)
class Site:
    base_url: str
    database: Path


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    database = tmp_path_factory.mktemp("shop") / "shopping.sqlite3"
    with ShopServer(ShopConfig(db_path=database)) as server:
        yield Site(server.base_url, database)


def replay(task: TaskConfig, base_url: str) -> Page:
    assert task.reference_solution is not None
    visitor = Replay(base_url)
    if task.require_login:
        visitor.sign_in()
    visitor.open(task.start_url)
    return visitor.run(task.reference_solution.steps)


@pytest.mark.parametrize("task", answer_tasks(), ids=ids(answer_tasks()))
def test_reference_answers_are_on_the_page_the_solution_ends_on(task: TaskConfig, shop: Site) -> None:
    page = replay(task, shop.base_url)
    assert page.status == 200, page.url
    refs = task.eval.reference_answers
    assert refs is not None and task.reference_solution is not None
    expected = ([refs.exact_match] if refs.exact_match is not None else []) + (refs.must_include or [])
    assert expected
    for item in expected:
        assert item.lower() in page.text().lower(), (item, page.url)
    answer = task.reference_solution.answer
    assert asyncio.run(string_match(task.eval, task.intent, answer, None)) == 1.0


@pytest.mark.parametrize("task", [t for t in all_tasks() if t.eval.unachievable],
                         ids=ids([t for t in all_tasks() if t.eval.unachievable]))
def test_unachievable_tasks_say_why_and_answer_na(task: TaskConfig, shop: Site) -> None:
    assert task.eval.string_note and task.reference_solution is not None
    assert asyncio.run(string_match(task.eval, task.intent, task.reference_solution.answer, None)) == 1.0
    page = replay(task, shop.base_url)
    subject = str(next(iter(task.instantiation_dict.values())))
    # Nothing on the page the search (or order list) leads to is a link to the missing thing.
    assert subject not in [_norm(a.text_content()) for a in page.doc.iter("a")]


@pytest.mark.parametrize("task", by_type("url_match"), ids=ids(by_type("url_match")))
def test_reference_urls_answer_and_the_solution_reaches_them(task: TaskConfig, shop: Site) -> None:
    reference = (task.eval.reference_url or "").replace(PLACEHOLDER, shop.base_url)
    for url in reference.split(OR):
        assert Replay(shop.base_url).open(url.strip()).status == 200, url
    page = replay(task, shop.base_url)
    assert url_match(reference, page.url) == 1.0, page.url


@pytest.mark.parametrize("task", by_type("db_check"), ids=ids(by_type("db_check")))
def test_db_checks_fail_before_and_pass_after_the_change(task: TaskConfig, tmp_path: Path) -> None:
    database = tmp_path / "shopping.sqlite3"
    with ShopServer(ShopConfig(db_path=database)) as server:
        assert db_check(task.eval.db_check, {"shopping": database}) == 0.0
        page = replay(task, server.base_url)
        assert page.status == 200, page.url
        assert db_check(task.eval.db_check, {"shopping": database}) == 1.0, page.text()[:2000]
