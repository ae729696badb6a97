"""WebPilot's selection, backpropagation and best state (search/puct.py), as pure functions."""

from __future__ import annotations

import math

import pytest

from branchwise.search.puct import NEW_CHILD, Stats, backpropagate, best_node, puct, select


def test_puct_is_q_plus_w_root_of_the_parents_visits_over_one_plus_the_childs() -> None:
    assert puct(6.0, 4, 1, 5.0) == pytest.approx(6.0 + 5.0 * 2 / 2)
    assert puct(6.0, 4, 0, 5.0) == pytest.approx(16.0)
    assert puct(3.0, 0, 0, 5.0) == 3.0  # nothing visited yet: the value alone


def test_a_child_the_appraiser_liked_is_kept_over_widening_while_it_is_fresh() -> None:
    stats = Stats()
    stats.scored(1, 8.0)
    stats.n[1] = 1
    # Q 8 + 5·1/2 = 10.5 for the child, against the parent's own score 0 + 5·1/1 = 5 for a new child.
    assert select(stats, 0, [1], can_widen=True, w=5.0) == 1


def test_the_tree_widens_when_its_children_disappoint() -> None:
    stats = Stats()
    stats.scored(1, 1.0)
    stats.n[1] = 3
    stats.scored(0, 2.0)
    # Child: 1 + 5·√3/4 ≈ 3.17; a new child: 2 + 5·√3 ≈ 10.7.
    assert select(stats, 0, [1], can_widen=True, w=5.0) == NEW_CHILD
    assert select(stats, 0, [1], can_widen=False, w=5.0) == 1


def test_the_less_visited_of_two_equal_children_is_chosen_and_ties_go_to_the_older() -> None:
    stats = Stats()
    for child in (1, 2):
        stats.scored(child, 5.0)
    stats.n.update({1: 2, 2: 1})
    assert select(stats, 0, [1, 2], can_widen=False, w=5.0) == 2
    stats.n[2] = 2
    assert select(stats, 0, [1, 2], can_widen=False, w=5.0) == 1


def test_no_children_and_no_room_leaves_only_widening() -> None:
    assert select(Stats(), 0, [], can_widen=False, w=5.0) == NEW_CHILD


def test_backpropagation_keeps_the_maximum_and_counts_a_visit_on_every_node_of_the_path() -> None:
    stats = Stats()
    stats.scored(0, 4.0)
    stats.scored(1, 7.0)
    backpropagate(stats, [0, 1], 5.0)
    assert (stats.value(0), stats.value(1)) == (5.0, 7.0)
    assert (stats.visits(0), stats.visits(1)) == (1, 1)
    backpropagate(stats, [0], 2.0)
    assert stats.value(0) == 5.0 and stats.visits(0) == 2


def test_the_best_node_is_the_one_scored_highest_itself_not_through_a_descendant() -> None:
    stats = Stats()
    stats.scored(1, 6.0)
    stats.scored(2, 9.0)
    backpropagate(stats, [1], 9.0)  # 1 is 2's parent: its Q rises to 9, its own score stays 6
    assert stats.value(1) == 9.0
    assert best_node(stats, [1, 2]) == 2
    assert best_node(stats, [0, 3]) is None  # never scored


def test_exploration_weight_zero_is_greedy_on_q() -> None:
    stats = Stats()
    stats.scored(1, 3.0)
    stats.scored(2, 4.0)
    stats.n.update({1: 0, 2: 9})
    assert select(stats, 0, [1, 2], can_widen=False, w=0.0) == 2
    assert math.isclose(puct(4.0, 9, 9, 0.0), 4.0)
