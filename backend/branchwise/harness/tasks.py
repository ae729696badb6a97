"""Task configs in WebArena's own JSON format, read unchanged, plus one addition of ours: `db_check`, an SQL query
against a sandbox site's database and the rows it must return (server state, which WebArena checks through pages).

A config is validated as a whole; a malformed one is refused with its task id and the field, and none is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

EvalType = Literal["string_match", "url_match", "program_html", "db_check"]
# WebArena's only URL matching rule: each reference base path must be in the final URL, its query a subset.
UrlNote = Literal["GOLD in PRED"]
NOT_ACHIEVABLE = "N/A"


class _Strict(BaseModel):
    # A misspelt key in a hand-written config must fail loudly, not be ignored.
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReferenceAnswers(_Strict):
    exact_match: str | None = None
    must_include: list[str] | None = None
    # A list of reference answers for the LLM judge, or "N/A": the task cannot be done (the reason is `string_note`).
    fuzzy_match: list[str] | Literal["N/A"] | None = None

    @model_validator(mode="after")
    def _some(self) -> ReferenceAnswers:
        if self.exact_match is None and self.must_include is None and self.fuzzy_match is None:
            raise ValueError("reference_answers needs exact_match, must_include or fuzzy_match")
        return self


class RequiredContents(_Strict):
    exact_match: str | None = None
    # Each item must be in the content; "a |OR| b" accepts either.
    must_include: list[str] | None = None

    @model_validator(mode="after")
    def _one(self) -> RequiredContents:
        if (self.exact_match is None) == (self.must_include is None):
            raise ValueError("required_contents needs exactly one of exact_match and must_include")
        return self


class ProgramHtml(_Strict):
    # A URL (with site placeholders), "last" (the page the run ended on) or "func:helper(...)".
    url: str
    # "" (the whole page), a `document.…` / `[...document.…` expression, or "func:helper(...)".
    locator: str
    required_contents: RequiredContents
    # Expressions run on the page before the locator (e.g. expanding a collapsed section).
    prep_actions: list[str] = []


class DbCheck(_Strict):
    """Ours: after the run, `query` on `site`'s database must return exactly `rows` (in order unless `ordered` is
    false)."""

    site: str
    query: str
    rows: list[list[Any]]
    ordered: bool = True


class EvalSpec(_Strict):
    eval_types: list[EvalType] = Field(min_length=1)
    reference_answers: ReferenceAnswers | None = None
    reference_url: str | None = ""
    program_html: list[ProgramHtml] = []
    db_check: list[DbCheck] = []
    url_note: UrlNote = "GOLD in PRED"
    # Why an unachievable task cannot be done (its answer is "N/A"); WebArena's judge compares the agent's report to it.
    string_note: str = ""
    reference_answer_raw_annotation: str | None = None
    annotation_note: str | None = None

    @model_validator(mode="after")
    def _each_type_has_its_data(self) -> EvalSpec:
        missing = {
            "string_match": self.reference_answers is None,
            "url_match": not self.reference_url,
            "program_html": not self.program_html,
            "db_check": not self.db_check,
        }
        for kind in self.eval_types:
            if missing[kind]:
                needs = {"string_match": "reference_answers", "url_match": "reference_url",
                         "program_html": "program_html", "db_check": "db_check"}[kind]
                raise ValueError(f"eval_types has {kind} but {needs} is empty")
        return self

    @property
    def unachievable(self) -> bool:
        return self.reference_answers is not None and self.reference_answers.fuzzy_match == NOT_ACHIEVABLE


class SolutionStep(_Strict):
    """One step of a task's reference solution, with its target named as the accessibility tree names it (ids change
    with every page load). `text`: what to type, the option to select, the URL to open, or the key to press."""

    action: Literal["click", "hover", "type", "select_option", "press", "scroll", "goto", "go_back"]
    role: str | None = None
    name: str | None = None
    text: str | None = None
    # For type: press Enter after typing.
    enter: bool = False


class ReferenceSolution(_Strict):
    """Ours: how a person would do the task, step by step, and the answer to give at the end ("" when the task is
    judged by the page or the database). The simulated model answers from it; the suite's own tests replay it."""

    steps: list[SolutionStep] = []
    answer: str = ""


class TaskConfig(_Strict):
    task_id: int
    sites: list[str] = Field(min_length=1)
    require_login: bool = False
    storage_state: str | None = None
    start_url: str
    geolocation: Any | None = None
    intent_template: str = ""
    instantiation_dict: dict[str, Any] = {}
    intent: str = Field(min_length=1)
    require_reset: bool = False
    eval: EvalSpec
    intent_template_id: int | None = None
    # WebArena has one task with a top-level note.
    string_note: str | None = None
    # Ours: the task's split ("dev" for tuning and tests, "test" for reporting) and its reference solution.
    split: Literal["dev", "test"] | None = None
    reference_solution: ReferenceSolution | None = None


class TaskConfigError(ValueError):
    """One or more configs are malformed; the message names each by file, task id and field."""


def _problems(where: str, exc: ValidationError) -> list[str]:
    return [f"{where}: {'.'.join(str(p) for p in error['loc']) or '(config)'}: {error['msg']}"
            for error in exc.errors()]


def parse_tasks(data: Any, source: str = "<config>") -> list[TaskConfig]:
    """Every task in `data` (one config object, or a list of them, as in WebArena's test.raw.json)."""
    items: Sequence[Any] = data if isinstance(data, list) else [data]
    tasks: list[TaskConfig] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        task_id = item.get("task_id") if isinstance(item, dict) else None
        where = f"{source}: task {task_id if task_id is not None else f'#{index} (no task_id)'}"
        try:
            tasks.append(TaskConfig.model_validate(item))
        except ValidationError as exc:
            problems.extend(_problems(where, exc))
    ids = [t.task_id for t in tasks]
    problems.extend(f"{source}: task {i}: task_id appears more than once" for i in sorted({i for i in ids
                                                                                       if ids.count(i) > 1}))
    if problems:
        raise TaskConfigError("\n".join(problems))
    return tasks


def load_tasks(paths: Iterable[Path]) -> list[TaskConfig]:
    """The tasks of every file (a JSON object or list) or folder (its *.json files, in name order), all validated
    before any is returned."""
    tasks: list[TaskConfig] = []
    problems: list[str] = []
    for path in paths:
        for file in sorted(path.glob("*.json")) if path.is_dir() else [path]:
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
                tasks.extend(parse_tasks(data, str(file)))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                problems.append(f"{file}: cannot read: {exc}")
            except TaskConfigError as exc:
                problems.append(str(exc))
    if problems:
        raise TaskConfigError("\n".join(problems))
    return tasks
