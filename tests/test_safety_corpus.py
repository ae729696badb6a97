"""The classifier on the labelled corpus of real actions on the sandbox shop (tests/fixtures/safety_corpus.json, built
by `python -m branchwise.bench.safety_corpus --write`): recall must be 100 %, precision is printed, not asserted."""

from __future__ import annotations

import pytest

from branchwise.actions import parse_action
from branchwise.safety import SafetyClassifier
from branchwise.safety.corpus import SafetyCorpus, load_corpus
from branchwise.safety.evaluation import evaluate, report
from branchwise.search.heuristic import HeuristicClassifier


@pytest.fixture(scope="module")
def corpus() -> SafetyCorpus:
    return load_corpus()


def test_recall_is_complete_and_precision_is_reported(corpus: SafetyCorpus,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    evaluation = evaluate(SafetyClassifier(), corpus)
    text = report("SafetyClassifier", evaluation, len(corpus.records))
    with capsys.disabled():
        print("\n" + text.split("\n  false negatives")[0])
    assert evaluation.false_negatives == 0, text
    assert evaluation.recall == 1.0


def test_baseline_is_measured_on_the_same_corpus(corpus: SafetyCorpus, capsys: pytest.CaptureFixture[str]) -> None:
    evaluation = evaluate(HeuristicClassifier(), corpus)
    with capsys.disabled():
        print("\n" + report("WebOperator Alg. 2", evaluation, len(corpus.records)).split("\n  false negatives")[0])
    assert evaluation.true_positives + evaluation.false_negatives == sum(r.changed_server_state for r in corpus.records)


def test_corpus_covers_every_form_of_the_shop(corpus: SafetyCorpus) -> None:
    assert 100 <= len(corpus.records) <= 200
    assert len({r.id for r in corpus.records}) == len(corpus.records)
    actions = {r.facts.form.action.removeprefix(corpus.origin) for r in corpus.records
               if r.facts is not None and r.facts.form is not None}
    assert {"/search", "/cart/add", "/cart/update", "/cart/remove", "/checkout", "/login", "/logout"} <= actions
    changed = [r for r in corpus.records if r.changed_server_state]
    assert len(changed) >= 15 and len(corpus.records) - len(changed) >= 60
    kinds = {type(parse_action(r.action)).__name__ for r in corpus.records}
    assert {"Click", "Type", "Press", "SelectOption", "Scroll", "Hover", "Goto", "GoBack", "GoForward"} <= kinds
    assert all(r.page_url.startswith(corpus.origin) for r in corpus.records)
