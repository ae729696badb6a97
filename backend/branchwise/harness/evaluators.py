"""WebArena's evaluators, each a small function, and `evaluate`, which multiplies the scores of a task's eval types.

Faithful to WebArena's harness (`evaluation_harness/evaluators.py`): the same answer cleaning, exact_match, must_include
(token match for a one-character reference), fuzzy_match by an LLM judge with WebArena's prompt where only "correct"
scores 1, "N/A" for unachievable tasks (an exact "N/A", else the judge compares the agent's report with the reason),
url_match (netloc + path of a reference in the final URL, its query a subset; `|OR|` alternatives), program_html (a
locator's result on a page, html-unescaped, against required contents; `|OR|` in must_include). Ours: db_check.
"""

from __future__ import annotations

import ast
import html
import logging
import re
import sqlite3
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

from ..chat_model import ChatModel, fill_template, load_prompt
from ..llm import ChatMessage
from .sites import SiteUrls
from .tasks import NOT_ACHIEVABLE, DbCheck, EvalSpec, ProgramHtml, ReferenceAnswers, TaskConfig

log = logging.getLogger(__name__)

OR = " |OR| "
# How WebArena samples its judge.
JUDGE_SAMPLING: dict[str, Any] = {"temperature": 0.0, "max_tokens": 768, "top_p": 1.0}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+|[^\w\s]")


class EvaluationError(RuntimeError):
    """A task cannot be evaluated as configured (no judge model for fuzzy_match, an unknown helper, no database)."""


def clean_answer(answer: str) -> str:
    """WebArena's cleaning: surrounding whitespace and one pair of matching quotes removed, lower-cased."""
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    return answer.lower()


def exact_match(reference: str, answer: str) -> float:
    return float(clean_answer(answer) == clean_answer(reference))


def tokens(text: str) -> list[str]:
    """Words, numbers (3.5 and 1,024 stay whole) and punctuation, as NLTK's word_tokenize splits English."""
    return _TOKEN.findall(text)


def must_include(reference: str, answer: str, *, tokenize: bool = False) -> float:
    """The reference is a substring of the answer; a one-character reference, with `tokenize`, must be a whole token
    (so "0" is not found in "10")."""
    ref, pred = clean_answer(reference), clean_answer(answer)
    if tokenize and len(ref) == 1 and len(tokens(ref)) == 1:
        return float(ref in tokens(pred))
    return float(ref in pred)


def _judge_messages(template: str, values: Mapping[str, str]) -> list[ChatMessage]:
    return [ChatMessage(role="system", content="You are a helpful assistant"),
            ChatMessage(role="user", content=fill_template(load_prompt(template), values).strip())]


async def fuzzy_match(judge: ChatModel, reference: str, answer: str, intent: str) -> float:
    """1 only if the judge concludes "correct" ("partially correct" and "incorrect" score 0). An empty answer matches
    only an empty reference, without asking."""
    if not answer:
        return float(not reference)
    reply = (await judge.complete(_judge_messages("webarena_fuzzy_judge_user.txt", {
        "question": intent, "reference": reference, "answer": answer}), **JUDGE_SAMPLING)).text.lower()
    if "partially correct" in reply or "incorrect" in reply:
        return 0.0
    if "correct" not in reply:
        log.warning("fuzzy_match: the judge's reply has no verdict, scored 0: %r", reply[:200])
        return 0.0
    return 1.0


async def ua_match(judge: ChatModel, reason: str, answer: str, intent: str) -> float:
    """Unachievable task: does the agent's report give the reason it cannot be done (even implicitly)? A run that
    gave no answer reported nothing: 0, without asking (a weak judge may call silence "the same")."""
    if not answer.strip():
        return 0.0
    reply = (await judge.complete(_judge_messages("webarena_ua_judge_user.txt", {
        "question": intent, "reason": reason, "answer": answer}), **JUDGE_SAMPLING)).text.lower()
    if "different" in reply:
        return 0.0
    if "same" not in reply:
        log.warning("ua_match: the judge's reply has no verdict, scored 0: %r", reply[:200])
        return 0.0
    return 1.0


def answer_holds(refs: ReferenceAnswers, answer: str) -> float:
    """The score of the approaches that need no judge (exact_match, must_include); 1.0 when there are none."""
    pred = clean_answer(answer)
    score = 1.0
    if refs.exact_match is not None:
        score *= exact_match(refs.exact_match, pred)
    if refs.must_include is not None:
        for item in refs.must_include:
            score *= must_include(item, pred, tokenize=len(refs.must_include) == 1)
    return score


async def string_match(spec: EvalSpec, intent: str, answer: str, judge: ChatModel | None) -> float:
    """The answer against reference_answers: every approach given must hold (scores multiplied)."""
    refs = spec.reference_answers
    assert refs is not None, "validated: string_match has reference_answers"
    pred = clean_answer(answer)
    score = answer_holds(refs, answer)
    if refs.fuzzy_match is not None:
        if refs.fuzzy_match == NOT_ACHIEVABLE:
            score *= exact_match(NOT_ACHIEVABLE, pred)
            if score != 1.0:
                # Not a bare "N/A": the agent may still have said why it cannot be done.
                score = await ua_match(_needs(judge), spec.string_note, pred, intent)
        else:
            for reference in refs.fuzzy_match:
                score *= await fuzzy_match(_needs(judge), reference, pred, intent)
    return score


def _needs(judge: ChatModel | None) -> ChatModel:
    if judge is None:
        raise EvaluationError("fuzzy_match needs a judge model (WebArena's judge is an LLM)")
    return judge


def _base_and_query(url: str) -> tuple[str, dict[str, list[str]]]:
    parsed = urlparse(url.rstrip("/"))
    return (parsed.netloc + parsed.path).rstrip("/"), parse_qs(parsed.query)


def url_match(reference_url: str, final_url: str) -> float:
    """WebArena's "GOLD in PRED": some reference's netloc + path is contained in the final URL's, and every query
    parameter of the references takes one of its reference values."""
    base, query = _base_and_query(final_url)
    ref_bases: list[str] = []
    ref_queries: dict[str, set[str]] = defaultdict(set)
    for reference in reference_url.split(OR):
        ref_base, ref_query = _base_and_query(reference.strip())
        ref_bases.append(ref_base)
        for key, values in ref_query.items():
            ref_queries[key].update(values)
    score = float(any(ref_base in base for ref_base in ref_bases))
    for key, wanted in ref_queries.items():
        score *= float(any(value in query.get(key, []) for value in wanted))
    return score


class PageReader(Protocol):
    """Reads a page for program_html, in a guarded tab of the run's browser."""

    async def read(self, url: str | None, locator: str, prep_actions: Sequence[str]) -> str:
        """Open `url` (None: the page the run ended on), run `prep_actions`, then return the locator's value as text:
        the page's HTML for an empty locator, "" when the expression fails (the page is not what was expected)."""
        ...


# `func:` helpers. URL helpers map the run's last URL (or nothing) to the URL to check; locator helpers read a value
# off a page. Sandbox sites register theirs here by name; WebArena's own (for its sites) are not available.
UrlHelper = Callable[..., str]
LocatorHelper = Callable[..., Awaitable[str]]


@dataclass
class Helpers:
    urls: dict[str, UrlHelper] = field(default_factory=dict)
    locators: dict[str, LocatorHelper] = field(default_factory=dict)


def reddit_get_post_url(url: str) -> str:
    """WebArena's helper: a post or comment URL (/f/<forum>/<id>/...) cut to the post's own URL; others unchanged."""
    parsed = urlparse(url)
    parts = parsed.path.split("/")
    if len(parts) < 4 or parts[1] != "f":
        return url
    return f"{parsed.scheme}://{parsed.netloc}/f/{parts[2]}/{parts[3]}/"


def default_helpers() -> Helpers:
    return Helpers(urls={"reddit_get_post_url": reddit_get_post_url})

_CALL = re.compile(r"^func:\s*(\w+)\((.*)\)\s*$", re.S)
_PAGE = object()


def parse_call(text: str, last_url: str) -> tuple[str, list[Any]]:
    """A `func:name(args)` of a config: the name and literal arguments, with `__last_url__` filled in and `__page__`
    standing for the page. No code is evaluated."""
    found = _CALL.match(text)
    if found is None:
        raise EvaluationError(f"not a helper call: {text!r}")
    name, raw = found.groups()
    args: list[Any] = []
    for part in _split_args(raw):
        if part == "__page__":
            args.append(_PAGE)
            continue
        try:
            args.append(ast.literal_eval(part.replace("__last_url__", last_url)))
        except (ValueError, SyntaxError) as exc:
            raise EvaluationError(f"helper {name}: argument {part!r} is not a literal") from exc
    return name, args


def _split_args(raw: str) -> list[str]:
    if not raw.strip():
        return []
    try:
        node = ast.parse(f"f({raw})", mode="eval").body
    except SyntaxError as exc:
        raise EvaluationError(f"cannot read the helper arguments {raw!r}") from exc
    assert isinstance(node, ast.Call)
    return [ast.get_source_segment(f"f({raw})", arg) or "" for arg in node.args]


async def _target_value(target: ProgramHtml, reader: PageReader, last_url: str, sites: SiteUrls,
                        helpers: Helpers) -> str:
    url: str | None = None
    if target.url.startswith("func:"):
        name, args = parse_call(target.url, last_url)
        if name not in helpers.urls:
            raise EvaluationError(f"no URL helper {name!r}")
        url = sites.resolve(helpers.urls[name](*args))
    elif target.url != "last":
        url = sites.resolve(target.url)
    if target.locator.startswith("func:"):
        name, args = parse_call(target.locator, last_url)
        if name not in helpers.locators:
            raise EvaluationError(f"no locator helper {name!r}")
        return await helpers.locators[name](*[reader if a is _PAGE else a for a in args])
    if target.locator.strip() and not target.locator.startswith(("document.", "[...document.")):
        raise EvaluationError(f"unknown locator {target.locator!r}")
    return await reader.read(url, target.locator, target.prep_actions)


async def program_html(spec: EvalSpec, reader: PageReader, last_url: str, sites: SiteUrls,
                       helpers: Helpers) -> float:
    score = 1.0
    for target in spec.program_html:
        content = html.unescape(await _target_value(target, reader, last_url, sites, helpers))
        required = target.required_contents
        if required.exact_match is not None:
            score *= exact_match(required.exact_match, content)
        else:
            assert required.must_include is not None
            for item in required.must_include:
                score *= float(any(must_include(option, content) for option in item.split(OR)))
    return score


def _rows(rows: Sequence[Sequence[Any]], ordered: bool) -> list[list[Any]]:
    listed = [list(row) for row in rows]
    return listed if ordered else sorted(listed, key=repr)


def db_check(checks: Sequence[DbCheck], databases: Mapping[str, Path]) -> float:
    """Each query, run read-only on its site's database, returns exactly the expected rows."""
    score = 1.0
    for check in checks:
        if check.site not in databases:
            raise EvaluationError(f"db_check: no database for site {check.site!r}")
        uri = f"{databases[check.site].resolve().as_uri()}?mode=ro"
        try:
            with sqlite3.connect(uri, uri=True) as conn:
                got = conn.execute(check.query).fetchall()
        except sqlite3.Error as exc:
            raise EvaluationError(f"db_check on {check.site}: {exc}") from exc
        score *= float(_rows(got, check.ordered) == _rows(check.rows, check.ordered))
    return score


@dataclass(frozen=True)
class RunOutcome:
    """What the run left to evaluate: its answer (None: it never answered) and the URL its tab ended on."""

    answer: str | None
    final_url: str


@dataclass(frozen=True)
class Verdict:
    score: float
    # Each eval type's score, in the config's order.
    parts: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class EvalTools:
    sites: SiteUrls
    judge: ChatModel | None = None
    reader: PageReader | None = None
    databases: Mapping[str, Path] = field(default_factory=dict)
    helpers: Helpers = field(default_factory=default_helpers)


async def evaluate(task: TaskConfig, outcome: RunOutcome, tools: EvalTools) -> Verdict:
    """The task's score: the product of its eval types' scores, as WebArena multiplies them."""
    spec = task.eval
    parts: list[tuple[str, float]] = []
    for kind in spec.eval_types:
        if kind == "string_match":
            part = await string_match(spec, task.intent, outcome.answer or "", tools.judge)
        elif kind == "url_match":
            part = url_match(tools.sites.resolve(spec.reference_url or ""), outcome.final_url)
        elif kind == "program_html":
            if tools.reader is None:
                raise EvaluationError("program_html needs a page reader (the run's browser)")
            part = await program_html(spec, tools.reader, outcome.final_url, tools.sites, tools.helpers)
        else:
            part = db_check(spec.db_check, tools.databases)
        parts.append((kind, part))
    score = 1.0
    for _, part in parts:
        score *= part
    return Verdict(score, tuple(parts))
