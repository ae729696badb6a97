"""Merging candidate actions (WebOperator App. A.2.6) and counting samples (Koh et al.)."""

from __future__ import annotations

import pytest

from branchwise.actions import Action, Click, Scroll, Stop, Type
from branchwise.search.candidates import (
    Candidate,
    best_stop,
    merge_candidates,
    normalize_fill_text,
    top_by_count,
)


def cand(action: Action, score: float = 0.0, source: str = "", thought: str = "", count: int = 1) -> Candidate:
    return Candidate(action=action, action_text=action.to_text(), thought=thought, count=count, score=score,
                     sources=(source,) if source else ())


@pytest.mark.parametrize(("raw", "expected"), [
    ("Hello World", "hello world"),
    ('  "Hello   World."  ', "hello world"),
    ("“Blue shirt”", "blue shirt"),
    ("'quoted, then dotted'.", "quoted, then dotted"),
    ("-5", "-5"),
    ("#123", "#123"),
    ("a\tb\nc", "a b c"),
    ("ＡＢＣ", "abc"),
    ("", ""),
])
def test_normalize_fill_text(raw: str, expected: str) -> None:
    assert normalize_fill_text(raw) == expected


def test_identical_actions_merge() -> None:
    merged = merge_candidates([cand(Click(3), 0.4, "a"), cand(Scroll("down"), 0.5, "b"), cand(Click(3), 0.4, "c")])
    assert [m.action for m in merged] == [Click(3), Scroll("down")]
    assert merged[0].count == 2
    assert merged[0].score == pytest.approx(0.8)
    assert merged[0].sources == ("a", "c")
    assert merged[1].count == 1


def test_different_actions_stay_apart() -> None:
    merged = merge_candidates([cand(Click(3)), cand(Click(4)), cand(Scroll("up")), cand(Scroll("down"))])
    assert len(merged) == 4


def test_stops_merge_only_when_their_answers_agree() -> None:
    merged = merge_candidates([
        cand(Stop("42"), 0.3, "a", thought="first"),
        cand(Click(1), 0.2, "b"),
        cand(Stop("forty-two"), 0.6, "c", thought="best"),
        cand(Stop('"42."'), 0.2, "d"),
    ])
    assert [m.action_text for m in merged] == ["stop [42]", "click [1]", "stop [forty-two]"]
    agreed = merged[0]
    assert agreed.count == 2 and agreed.sources == ("a", "d") and agreed.score == pytest.approx(0.5)
    assert merged[2].count == 1


def test_best_stop_keeps_the_highest_scored_answer_not_the_most_frequent() -> None:
    scored = [cand(Stop("1997"), 0.4, count=2), cand(Click(1), 0.9), cand(Stop("2003"), 0.7)]
    assert [c.action_text for c in best_stop(scored)] == ["click [1]", "stop [2003]"]


def test_best_stop_ties_go_to_the_most_agreed_then_the_first() -> None:
    assert best_stop([cand(Stop("x"), 0.5), cand(Stop("y"), 0.5, count=2)])[0].action == Stop("y")
    assert best_stop([cand(Stop("x"), 0.5), cand(Stop("y"), 0.5)])[0].action == Stop("x")
    assert best_stop([cand(Click(2))]) == [cand(Click(2))]


def test_fills_with_same_normalised_text_merge() -> None:
    merged = merge_candidates([
        cand(Type(7, "Blue Shirt", False), 0.2, "a"),
        cand(Type(7, '"blue  shirt."', False), 0.3, "b"),
        cand(Type(8, "blue shirt", False), 0.1, "c"),
    ])
    assert len(merged) == 2
    assert merged[0].action.element_id == 7
    assert merged[0].count == 2
    assert merged[0].score == pytest.approx(0.5)
    assert merged[0].sources == ("a", "b")
    assert merged[1].action == Type(8, "blue shirt", False)


def test_fills_with_different_press_enter_do_not_merge() -> None:
    merged = merge_candidates([cand(Type(7, "shoes", False)), cand(Type(7, "Shoes", True))])
    assert [m.action.press_enter for m in merged] == [False, True]  # type: ignore[union-attr]


def test_fills_with_different_text_do_not_merge() -> None:
    assert len(merge_candidates([cand(Type(7, "shoes", True)), cand(Type(7, "shoe", True))])) == 2


def test_merge_sums_scores_and_counts_and_keeps_first_appearance_order() -> None:
    merged = merge_candidates([
        cand(Scroll("down"), 0.1, count=2), cand(Click(1), 0.9), cand(Scroll("down"), 0.25, count=3),
    ])
    assert [m.action for m in merged] == [Scroll("down"), Click(1)]
    assert merged[0].count == 5
    assert merged[0].score == pytest.approx(0.35)


def test_merge_empty() -> None:
    assert merge_candidates([]) == []


def test_top_by_count_keeps_most_frequent_with_shares() -> None:
    samples = [cand(Click(1)), cand(Click(2)), cand(Click(2)), cand(Scroll("down")), cand(Click(2)), cand(Click(1))]
    top = top_by_count(samples, 2)
    assert [(c.action, c.count) for c, _ in top] == [(Click(2), 3), (Click(1), 2)]
    assert [share for _, share in top] == pytest.approx([3 / 6, 2 / 6])


def test_top_by_count_ties_by_first_appearance() -> None:
    samples = [cand(Scroll("up")), cand(Click(9)), cand(Click(9)), cand(Scroll("up")), cand(Click(4))]
    top = top_by_count(samples, 3)
    assert [c.action for c, _ in top] == [Scroll("up"), Click(9), Click(4)]
    assert [share for _, share in top] == pytest.approx([0.4, 0.4, 0.2])


def test_top_by_count_counts_only_identical_actions() -> None:
    # Koh et al. count exact duplicates: differently written fills are different samples.
    top = top_by_count([cand(Type(1, "a", False)), cand(Type(1, "A", False))], 5)
    assert [c.count for c, _ in top] == [1, 1]


def test_top_by_count_uses_counts_and_edge_cases() -> None:
    top = top_by_count([cand(Click(1), count=3), cand(Click(2))], 1)
    assert [(c.action, share) for c, share in top] == [(Click(1), 0.75)]
    assert top_by_count([cand(Click(1))], 0) == []
    assert top_by_count([], 3) == []
    assert len(top_by_count([cand(Click(1))], 5)) == 1
