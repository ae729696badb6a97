"""WebArena's evaluators on cases modelled on its configs: cleaning (quotes, case), lists, one-character references,
the LLM judge (only "correct" scores 1), unachievable tasks ("N/A"), URL matching with |OR| and queries, program_html
through a page reader, our db_check, and scores multiplied."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from branchwise.harness.evaluators import (
    EvalTools,
    EvaluationError,
    Helpers,
    RunOutcome,
    clean_answer,
    db_check,
    evaluate,
    exact_match,
    must_include,
    parse_call,
    reddit_get_post_url,
    string_match,
    url_match,
)
from branchwise.harness.sites import SiteUrls
from branchwise.harness.tasks import DbCheck, EvalSpec, TaskConfig

from fake_models import Call, FakeModel

SITES = SiteUrls.parse(["reddit=http://forum.test", "shopping=http://shop.test"])


def task(eval_spec: dict[str, Any], intent: str = "What is the answer?") -> TaskConfig:
    return TaskConfig.model_validate({"task_id": 1, "sites": ["reddit"], "start_url": "__REDDIT__", "intent": intent,
                                      "eval": eval_spec})


def spec(**fields: Any) -> EvalSpec:
    return EvalSpec.model_validate(fields)


@pytest.mark.parametrize(("raw", "clean"), [
    ('  "Quest Lumaflex™ Band" ', "quest lumaflex™ band"), ("'Sprite'", "sprite"), ("\"It's\"", "it's"),
    ("'mismatched\"", "'mismatched\""), ("N/A", "n/a"), ("'", "'"),
])
def test_answers_are_cleaned_as_webarena_does(raw: str, clean: str) -> None:
    assert clean_answer(raw) == clean


def test_exact_match_ignores_case_and_quotes_but_not_punctuation() -> None:
    assert exact_match("Sprite", '"sprite"') == 1.0
    assert exact_match("Sprite", "Sprite.") == 0.0


def test_must_include_tokenizes_a_one_character_reference() -> None:
    assert must_include("0", "I found 10 orders", tokenize=True) == 0.0
    assert must_include("0", "There are 0 orders", tokenize=True) == 1.0
    assert must_include("5", "It costs 3.5 dollars", tokenize=True) == 0.0
    assert must_include("0", "I found 10 orders") == 1.0  # without tokenizing, a substring


def judge(*verdicts: str) -> FakeModel:
    return FakeModel.queue(*verdicts)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_string_match_multiplies_its_approaches() -> None:
    both = spec(eval_types=["string_match"], reference_answers={"must_include": ["Jan", "Feb"]})
    assert run(string_match(both, "months?", "January and February", None)) == 1.0
    assert run(string_match(both, "months?", "January only", None)) == 0.0
    single = spec(eval_types=["string_match"], reference_answers={"must_include": ["0"]})
    assert run(string_match(single, "how many?", "10", None)) == 0.0


@pytest.mark.parametrize(("verdict", "score"), [
    ("The answer is correct.", 1.0), ("Partially correct: it misses one.", 0.0), ("incorrect", 0.0),
    ("I cannot tell.", 0.0),
])
def test_fuzzy_match_scores_1_only_for_correct(verdict: str, score: float) -> None:
    model = judge(verdict)
    fuzzy = spec(eval_types=["string_match"], reference_answers={"fuzzy_match": ["the order was cancelled"]})
    assert run(string_match(fuzzy, "What happened to my order?", "It got canceled", model)) == score
    [call] = model.calls
    assert "reference answer: the order was cancelled" in call.last
    assert "student answer: it got canceled" in call.last and "question: What happened to my order?" in call.last
    assert (call.temperature, call.top_p, call.max_tokens) == (0.0, 1.0, 768)


def test_fuzzy_match_needs_a_judge_and_an_empty_answer_is_not_judged() -> None:
    fuzzy = spec(eval_types=["string_match"], reference_answers={"fuzzy_match": ["yes"]})
    with pytest.raises(EvaluationError, match="needs a judge model"):
        run(string_match(fuzzy, "q", "yes", None))
    model = judge()
    assert run(string_match(fuzzy, "q", "", model)) == 0.0 and model.calls == []


def test_an_unachievable_task_left_without_an_answer_scores_0_without_asking_the_judge() -> None:
    na = spec(eval_types=["string_match"], reference_answers={"fuzzy_match": "N/A"},
              string_note="There is no review about the price")
    model = judge("[same]")  # a weak judge that calls silence "the same"
    assert run(string_match(na, "What do reviews say about the price?", "", model)) == 0.0 and model.calls == []


def test_unachievable_tasks_accept_na_or_a_report_giving_the_reason() -> None:
    na = spec(eval_types=["string_match"], reference_answers={"fuzzy_match": "N/A"},
              string_note="There is no review about the price")
    assert run(string_match(na, "What do reviews say about the price?", "N/A", None)) == 1.0
    model = judge("[same]")
    assert run(string_match(na, "What do reviews say about the price?", "No review mentions the price", model)) == 1.0
    assert "Reason_1 = There is no review about the price" in model.calls[0].last
    assert run(string_match(na, "q", "It is cheap", judge("[different]"))) == 0.0


@pytest.mark.parametrize(("reference", "final", "score"), [
    ("__REDDIT__/f/books", "http://forum.test/f/books/", 1.0),
    ("__REDDIT__/f/books", "http://forum.test/f/books/123/a-post", 1.0),  # the reference path in the final one
    ("__REDDIT__/f/books", "http://forum.test/f/movies", 0.0),
    ("__SHOPPING__/search?q=tent", "http://shop.test/search?q=tent&page=2", 1.0),
    ("__SHOPPING__/search?q=tent", "http://shop.test/search?q=stove", 0.0),
    ("__SHOPPING__/search?q=tent", "http://shop.test/search", 0.0),
    ("__REDDIT__/f/books |OR| __REDDIT__/f/reading", "http://forum.test/f/reading", 1.0),
])
def test_url_match_is_gold_in_pred(reference: str, final: str, score: float) -> None:
    assert url_match(SITES.resolve(reference), final) == score


class Reader:
    """Answers program_html's reads from a table: (url or None, locator) -> text, and records them."""

    def __init__(self, pages: dict[tuple[str | None, str], str]) -> None:
        self.pages = pages
        self.reads: list[tuple[str | None, str, tuple[str, ...]]] = []

    async def read(self, url: str | None, locator: str, prep_actions: Sequence[str]) -> str:
        self.reads.append((url, locator, tuple(prep_actions)))
        return self.pages.get((url, locator), "")


TITLE = "document.querySelector('h1').outerText"


def test_program_html_reads_each_target_and_multiplies() -> None:
    config = task({"eval_types": ["program_html"], "program_html": [
        {"url": "last", "locator": TITLE, "required_contents": {"exact_match": "Tom & Jerry"}},
        {"url": "__SHOPPING__/cart", "locator": "", "prep_actions": ["document.querySelector('a').click()"],
         "required_contents": {"must_include": ["Tent |OR| Tarp", "Stove"]}},
    ]})
    reader = Reader({(None, TITLE): "Tom &amp; Jerry", ("http://shop.test/cart", ""): "<li>Tarp</li><li>Stove</li>"})
    tools = EvalTools(SITES, reader=reader)
    verdict = run(evaluate(config, RunOutcome(None, "http://forum.test/f/books/1"), tools))
    assert verdict.score == 1.0 and verdict.parts == (("program_html", 1.0),)
    assert reader.reads == [(None, TITLE, ()), ("http://shop.test/cart", "", ("document.querySelector('a').click()",))]
    reader.pages[("http://shop.test/cart", "")] = "<li>Tent</li>"
    assert run(evaluate(config, RunOutcome(None, "http://forum.test/f/books/1"), tools)).score == 0.0


def test_program_html_helpers_are_called_by_name_never_evaluated() -> None:
    config = task({"eval_types": ["program_html"], "program_html": [
        {"url": "func:reddit_get_post_url('__last_url__')", "locator": TITLE,
         "required_contents": {"must_include": ["Hello"]}},
        {"url": "last", "locator": "func:member_role(__page__, 'yjlou')", "required_contents": {"exact_match": "Dev"}},
    ]})
    reader = Reader({("http://forum.test/f/books/7/", TITLE): "Hello world"})

    async def member_role(page: Reader, who: str) -> str:
        return "Developer" if who == "yjlou" and page is reader else ""

    tools = EvalTools(SITES, reader=reader, helpers=Helpers(urls={"reddit_get_post_url": reddit_get_post_url},
                                                            locators={"member_role": member_role}))
    last = "http://forum.test/f/books/7/a-title/comment/3"
    verdict = run(evaluate(config, RunOutcome("", last), tools))
    assert verdict.score == 0.0  # "Developer" is not exactly "Dev"
    assert reader.reads[0][0] == "http://forum.test/f/books/7/"
    assert parse_call("func:f('__last_url__', 3)", "http://x/") == ("f", ["http://x/", 3])
    with pytest.raises(EvaluationError, match="not a literal"):
        parse_call("func:f(__import__('os'))", "")
    with pytest.raises(EvaluationError, match="no URL helper 'shopping_get_latest_order_url'"):
        run(evaluate(task({"eval_types": ["program_html"], "program_html": [
            {"url": "func:shopping_get_latest_order_url()", "locator": "",
             "required_contents": {"must_include": ["x"]}}]}), RunOutcome("", ""), EvalTools(SITES, reader=reader)))


def database(tmp_path: Path) -> Path:
    path = tmp_path / "forum.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE posts (id INTEGER, title TEXT)")
        conn.executemany("INSERT INTO posts VALUES (?, ?)", [(1, "Hello"), (2, "Second")])
    return path


def test_db_check_compares_the_rows_read_only(tmp_path: Path) -> None:
    databases = {"reddit": database(tmp_path)}
    query = "SELECT id, title FROM posts ORDER BY id"
    assert db_check([DbCheck(site="reddit", query=query, rows=[[1, "Hello"], [2, "Second"]])], databases) == 1.0
    assert db_check([DbCheck(site="reddit", query=query, rows=[[2, "Second"], [1, "Hello"]])], databases) == 0.0
    assert db_check([DbCheck(site="reddit", query=query, rows=[[2, "Second"], [1, "Hello"]], ordered=False)],
                    databases) == 1.0
    with pytest.raises(EvaluationError, match="readonly"):
        db_check([DbCheck(site="reddit", query="DELETE FROM posts", rows=[])], databases)
    with pytest.raises(EvaluationError, match="no database for site 'gitlab'"):
        db_check([DbCheck(site="gitlab", query=query, rows=[])], databases)


def test_evaluate_multiplies_the_eval_types(tmp_path: Path) -> None:
    config = task({"eval_types": ["string_match", "url_match", "db_check"],
                   "reference_answers": {"exact_match": "2"}, "reference_url": "__REDDIT__/f/books",
                   "db_check": [{"site": "reddit", "query": "SELECT count(*) FROM posts", "rows": [[2]]}]})
    tools = EvalTools(SITES, databases={"reddit": database(tmp_path)})
    right = run(evaluate(config, RunOutcome("2", "http://forum.test/f/books"), tools))
    assert right.score == 1.0 and [k for k, _ in right.parts] == ["string_match", "url_match", "db_check"]
    wrong_page = run(evaluate(config, RunOutcome("2", "http://forum.test/f/movies"), tools))
    assert wrong_page.score == 0.0 and dict(wrong_page.parts)["string_match"] == 1.0
    no_answer = run(evaluate(config, RunOutcome(None, "http://forum.test/f/books"), tools))
    assert no_answer.score == 0.0
    with pytest.raises(EvaluationError, match="needs a page reader"):
        run(evaluate(task({"eval_types": ["program_html"], "program_html": [
            {"url": "last", "locator": "", "required_contents": {"must_include": ["x"]}}]}),
            RunOutcome("", ""), EvalTools(SITES)))


def test_the_judge_prompt_is_webarenas() -> None:
    model = FakeModel(lambda call: "correct")
    fuzzy = spec(eval_types=["string_match"], reference_answers={"fuzzy_match": ["x"]})
    run(string_match(fuzzy, "q", "x", model))
    call: Call = model.calls[0]
    assert call.messages[0].content == "You are a helpful assistant"
    assert call.last.startswith("Help a teacher to grade the answer of a student given a question.")
    assert call.last.endswith("Conclude the judgement by correct/incorrect/partially correct.")
