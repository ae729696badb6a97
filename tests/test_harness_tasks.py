"""Task configs in WebArena's format: every one of WebArena's 812 published configs loads unchanged; a malformed config
is refused with its task id and the field; site placeholders resolve to the base URLs given."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from branchwise.harness.sites import SiteUrls, UnknownSite
from branchwise.harness.tasks import TaskConfigError, load_tasks, parse_tasks

WEBARENA = Path(__file__).parent / "fixtures" / "webarena" / "test.raw.json.gz"


def webarena() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(gzip.decompress(WEBARENA.read_bytes()))
    return data


def test_every_published_webarena_config_loads() -> None:
    tasks = parse_tasks(webarena(), "test.raw.json")
    assert len(tasks) == 812 and [t.task_id for t in tasks] == list(range(812))
    kinds = {kind: sum(kind in t.eval.eval_types for t in tasks) for kind in ("string_match", "url_match",
                                                                              "program_html")}
    assert kinds == {"string_match": 335, "url_match": 205, "program_html": 411}
    unachievable = [t for t in tasks if t.eval.unachievable]
    assert unachievable and all(t.eval.string_note for t in unachievable[:3])
    first = tasks[0]
    assert (first.intent, first.start_url, first.sites) == (
        "What is the top-1 best-selling product in 2022", "__SHOPPING_ADMIN__", ["shopping_admin"])


def broken(task_id: int, change: Any) -> list[dict[str, Any]]:
    tasks = copy.deepcopy(webarena()[:3])
    change(next(t for t in tasks if t["task_id"] == task_id))
    return tasks


@pytest.mark.parametrize(("change", "expected"), [
    (lambda t: t.pop("intent"), "task 1: intent: Field required"),
    (lambda t: t["eval"].update(eval_types=["html_match"]), "task 1: eval.eval_types.0: Input should be"),
    (lambda t: t["eval"].update(reference_answers=None), "task 1: eval: Value error, eval_types has string_match but "
                                                         "reference_answers is empty"),
    (lambda t: t["eval"]["reference_answers"].update(exact_match=3), "task 1: eval.reference_answers.exact_match"),
    (lambda t: t["eval"].update(refrence_url="x"), "task 1: eval.refrence_url: Extra inputs are not permitted"),
    (lambda t: t.update(task_id=0), "task 0: task_id appears more than once"),
])
def test_a_malformed_config_is_refused_with_its_task_id_and_field(change: Any, expected: str) -> None:
    with pytest.raises(TaskConfigError) as raised:
        parse_tasks(broken(1, change), "tasks.json")
    assert expected in str(raised.value) and str(raised.value).startswith("tasks.json: task")


def test_every_problem_of_every_file_is_reported_and_nothing_is_skipped(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    good.write_text(json.dumps(webarena()[0]))
    bad.write_text(json.dumps(broken(2, lambda t: t.pop("start_url"))))
    (tmp_path / "c.json").write_text("{not json")
    assert [t.task_id for t in load_tasks([good])] == [0]
    with pytest.raises(TaskConfigError) as raised:
        load_tasks([tmp_path])
    message = str(raised.value)
    assert f"{bad}: task 2: start_url: Field required" in message
    assert f"{tmp_path / 'c.json'}: cannot read" in message


def test_placeholders_resolve_to_the_given_sites() -> None:
    sites = SiteUrls.parse(["shopping=http://127.0.0.1:8800/", "REDDIT=http://127.0.0.1:8801"])
    assert sites.resolve("__SHOPPING__/cart |OR| __REDDIT__/f/books") == (
        "http://127.0.0.1:8800/cart |OR| http://127.0.0.1:8801/f/books")
    assert sites.resolve("func:reddit_get_post_url('__last_url__')") == "func:reddit_get_post_url('__last_url__')"
    with pytest.raises(UnknownSite, match="no base URL for __GITLAB__ .*--site gitlab=URL"):
        sites.resolve("__GITLAB__/a11yproject")
    with pytest.raises(UnknownSite, match="expected NAME=URL"):
        SiteUrls.parse(["shopping"])
