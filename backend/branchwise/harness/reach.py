"""Whether a run that failed its task had the right answer within reach: where a strategy loses the tasks it fails,
reading a page or getting to it, is what says what would change its result.

Read from the run store: each node keeps the page text its model was shown there and the answer proposed there.
- An information task whose reference an evaluator without a judge can check (exact_match, must_include): its right
  answer was *proposed* at some node but not given; else it was *shown* (on a page the model read) but never
  proposed; else *not shown*. A number (a count, a price) is not looked for on the pages: other things' numbers
  would be found.
- A navigation task (url_match): the reference page was *reached* at some node, the run ending elsewhere; else *not
  reached*.
An unachievable task's "N/A" proposed on the way but not given is *proposed* too; otherwise tasks an LLM judges
(fuzzy_match) and state changes are not told.

And where a wrong answer came from, whatever the task: *on a page shown* (the model read the wrong thing) or *on no
page shown* (the model made it up: a price, a count, a name no page it read had).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from ..search.grounding import canonical_number, numbers_in, unseen_numbers
from ..store import NodeRecord
from .evaluators import answer_holds, clean_answer, exact_match, tokens, url_match
from .sites import PLACEHOLDER
from .tasks import NOT_ACHIEVABLE, ReferenceAnswers, TaskConfig

Reach = Literal["proposed", "shown", "not shown", "a number, not proposed", "reached", "not reached"]

# In the order the report shows them.
REACHES: tuple[Reach, ...] = ("proposed", "shown", "not shown", "a number, not proposed", "reached", "not reached")

REACH_NOTES: dict[Reach, str] = {
    "proposed": "the right answer was proposed on the way but not given (the search chose another, or none)",
    "shown": "the right answer was on a page the model was shown, and never proposed",
    "not shown": "no page the model was shown had the right answer",
    "a number, not proposed": "the right answer is a number and was never proposed; whether a page showed it cannot "
                              "be told from the page's text (pages show numbers of other things: '-5 points', "
                              "'18 stars')",
    "reached": "the run was on the right page on the way, and ended elsewhere",
    "not reached": "the run never was on the right page",
}

AnswerSource = Literal["on a page shown", "on no page shown"]

ANSWER_SOURCES: tuple[AnswerSource, ...] = ("on a page shown", "on no page shown")

ANSWER_SOURCE_NOTES: dict[AnswerSource, str] = {
    "on a page shown": "the wrong answer is on a page the model was shown: it read the wrong thing",
    "on no page shown": "no page the model was shown has the wrong answer: it made it up",
}

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*")


def _words(text: str) -> list[str]:
    """The text's words, a number as the answer check reads it (12.00 is 12, 1,345 is 1345)."""
    return [canonical_number(word) if _NUMBER.fullmatch(word) else word for word in tokens(text)]


def _page_words(text: str) -> list[str]:
    """The page's words as an answer is looked for in them: without the tab and URL lines (a user's name in the URL
    of their post is not on the page)."""
    return _words("\n".join(line for line in text.splitlines() if not line.startswith(("Tab ", "URL: "))).lower())


def _contains(words: list[str], part: list[str]) -> bool:
    n = len(part)
    return n > 0 and any(words[i:i + n] == part for i in range(len(words) - n + 1))


def _items(references: ReferenceAnswers) -> list[str]:
    """The exact answer, or each item the answer must include."""
    return ([references.exact_match] if references.exact_match is not None else []) + (references.must_include or [])


def is_number(references: ReferenceAnswers) -> bool:
    items = _items(references)
    return bool(items) and all(_NUMBER.fullmatch(item.strip().lstrip("$")) for item in items)


def shown(references: ReferenceAnswers, page_text: str) -> bool:
    """Every reference is on the page, as whole words."""
    items = _items(references)
    words = _page_words(page_text)
    return bool(items) and all(_contains(words, _words(clean_answer(item))) for item in items)


def answer_source(answer: str, nodes: Sequence[NodeRecord]) -> AnswerSource | None:
    """Whether the answer's words, in order, are on a page the model was shown; None for no answer, or "N/A".
    Its numbers are read as the answer check reads them (search/grounding.py): an element's id is not a number the
    page shows, and $12.00 is 12."""
    words = _words(clean_answer(answer))
    if not words or clean_answer(answer) == NOT_ACHIEVABLE.lower():
        return None
    seen = frozenset().union(*(numbers_in(node.observation_text) for node in nodes))
    if unseen_numbers(answer, seen):
        return "on no page shown"
    on_page = any(_contains(_page_words(node.observation_text), words) for node in nodes)
    return "on a page shown" if on_page else "on no page shown"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def reached(reference_url: str, url: str) -> bool:
    """The page is the reference page, the reference's site placeholders standing for the page's own origin (the
    eval's sandboxes change ports from task to task)."""
    return bool(url) and url_match(PLACEHOLDER.sub(_origin(url), reference_url), url) == 1.0


@dataclass(frozen=True)
class Nearness:
    """How near a failed run came to its task, and where its wrong answer came from; None where it cannot be told."""

    reach: Reach | None
    answer_source: AnswerSource | None


def nearness(task: TaskConfig, answer: str, nodes: Sequence[NodeRecord]) -> Nearness:
    """Of a failed run that gave this answer and made these nodes."""
    wrong = "string_match" in task.eval.eval_types
    return Nearness(reach(task, nodes), answer_source(answer, nodes) if wrong else None)


def reach(task: TaskConfig, nodes: Sequence[NodeRecord]) -> Reach | None:
    """How near the run with these nodes came to solving the task; None when it cannot be told (see the module)."""
    spec = task.eval
    if {"program_html", "db_check"} & set(spec.eval_types):
        return None
    references = spec.reference_answers
    if "string_match" in spec.eval_types and references is not None:
        if references.fuzzy_match == NOT_ACHIEVABLE:
            # A bare "N/A" proposed is right; whether the judge would have taken another report cannot be told.
            said = any(node.answer and exact_match(NOT_ACHIEVABLE, node.answer) for node in nodes)
            return "proposed" if said else None
        if references.fuzzy_match is not None:
            return None
        if any(node.answer and answer_holds(references, node.answer) == 1.0 for node in nodes):
            return "proposed"
        if is_number(references):
            return "a number, not proposed"
        return "shown" if any(shown(references, node.observation_text) for node in nodes) else "not shown"
    if "url_match" in spec.eval_types and spec.reference_url:
        return "reached" if any(reached(spec.reference_url, node.url) for node in nodes) else "not reached"
    return None
