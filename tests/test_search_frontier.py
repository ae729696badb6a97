"""WebOperator's frontier: selection (Alg. 5), one test per branch, and pruning (Alg. 4 / §3.4)."""

from __future__ import annotations

import itertools

import pytest
from pydantic import ValidationError

from branchwise.actions import Click, Stop
from branchwise.core.classes import ActionClass
from branchwise.search.frontier import FrontierItem, SelectionConfig, prune_frontier, select_action

SAFE, DESTRUCTIVE, TERMINATING = ActionClass.SAFE, ActionClass.DESTRUCTIVE, ActionClass.TERMINATING
CONFIG = SelectionConfig()  # k_t 2, k_d 1, budget 4
_seq = itertools.count()


def item(cls: ActionClass, reward: float, node: int = 0, text: str | None = None,
         seq: int | None = None) -> FrontierItem:
    n = next(_seq) if seq is None else seq
    action = Stop(f"answer {n}") if cls is TERMINATING else Click(n)
    return FrontierItem(node_id=node, action=action, action_text=text or action.to_text(), action_class=cls,
                        reward=reward, seq=n)


def select(items: list[FrontierItem], *, budget: int = 4, terminating: int = 0, destruction: int = 0,
           config: SelectionConfig = CONFIG) -> tuple[FrontierItem | None, list[FrontierItem]]:
    return select_action(items, config=config, budget=budget, terminating_count=terminating,
                         destruction_count=destruction)


# ---- SelectionConfig


def test_config_defaults_and_validation() -> None:
    assert (CONFIG.k_t, CONFIG.k_d, CONFIG.budget, CONFIG.min_budget) == (2, 1, 4, 1)
    assert CONFIG.reduced_budget(4) == 3
    assert CONFIG.reduced_budget(1) == 1
    with pytest.raises(ValidationError):
        SelectionConfig(budget=2, min_budget=3)
    with pytest.raises(ValidationError):
        CONFIG.k_t = 5  # type: ignore[misc]


# ---- select_action, normal branch (frontier within budget, at most one destructive)


def test_empty_frontier_gives_none() -> None:
    assert select([]) == (None, [])


def test_safe_first_by_reward_ties_to_lower_seq() -> None:
    low, high, high_newer = item(SAFE, 0.2, seq=1), item(SAFE, 0.8, seq=3), item(SAFE, 0.8, seq=5)
    chosen, rest = select([low, high_newer, high])
    assert chosen is high
    assert rest == [low, high_newer]


def test_safe_beats_higher_rewarded_destructive_and_terminating() -> None:
    safe = item(SAFE, 0.1)
    chosen, _ = select([item(DESTRUCTIVE, 0.9), item(TERMINATING, 0.95), safe])
    assert chosen is safe


def test_terminating_deferred_below_k_t() -> None:
    stop, safe = item(TERMINATING, 0.9), item(SAFE, 0.3)
    assert select([stop, safe], terminating=1)[0] is safe


def test_terminating_chosen_at_k_t() -> None:
    stop, safe = item(TERMINATING, 0.9), item(SAFE, 0.3)
    assert select([stop, safe], terminating=2)[0] is stop
    assert select([stop, safe], terminating=3)[0] is stop
    # At K_T the stop still competes on reward: a better safe action goes first.
    better = item(SAFE, 0.95)
    assert select([stop, better], terminating=2)[0] is better


def test_destructive_deferred_while_safe_exists() -> None:
    destructive, safe = item(DESTRUCTIVE, 0.9), item(SAFE, 0.2)
    chosen, rest = select([destructive, safe])
    assert chosen is safe
    assert rest == [destructive]


def test_destructive_chosen_when_only_destructive_and_terminating_remain() -> None:
    destructive, stop = item(DESTRUCTIVE, 0.4), item(TERMINATING, 0.9)
    chosen, rest = select([stop, destructive], terminating=0, destruction=0)
    assert chosen is destructive
    assert rest == [stop]


def test_terminating_preferred_over_destructive_after_k_d() -> None:
    destructive, stop, weaker_stop = item(DESTRUCTIVE, 0.9), item(TERMINATING, 0.5), item(TERMINATING, 0.3)
    chosen, rest = select([destructive, weaker_stop, stop], terminating=0, destruction=1)
    assert chosen is stop
    assert rest == [destructive, weaker_stop]


def test_only_deferred_stops_remain_best_stop_is_chosen() -> None:
    low, high = item(TERMINATING, 0.2), item(TERMINATING, 0.7)
    assert select([low, high], terminating=0, destruction=0)[0] is high


# ---- select_action, exploit branch (over budget, or more than one destructive)


def test_over_budget_picks_by_reward_even_destructive() -> None:
    destructive, safe1, safe2 = item(DESTRUCTIVE, 0.9), item(SAFE, 0.5), item(SAFE, 0.4)
    chosen, rest = select([safe1, destructive, safe2], budget=2)
    assert chosen is destructive
    assert rest == [safe1, safe2]
    # Within budget the same frontier runs the safe action first.
    assert select([safe1, destructive, safe2], budget=4)[0] is safe1


def test_over_budget_defers_stops_below_k_t_then_takes_next_best() -> None:
    stop, safe, other = item(TERMINATING, 0.99), item(SAFE, 0.6), item(SAFE, 0.1)
    chosen, rest = select([stop, safe, other], budget=2, terminating=1)
    assert chosen is safe
    assert rest == [stop, other]  # the deferred stop is put back


def test_over_budget_stop_at_k_t_wins_by_reward() -> None:
    stop, safe, other = item(TERMINATING, 0.99), item(SAFE, 0.6), item(SAFE, 0.1)
    assert select([stop, safe, other], budget=2, terminating=2)[0] is stop


def test_more_than_one_destructive_triggers_exploit_branch() -> None:
    d1, d2, safe = item(DESTRUCTIVE, 0.8), item(DESTRUCTIVE, 0.7), item(SAFE, 0.3)
    chosen, rest = select([safe, d2, d1], budget=4)
    assert chosen is d1
    assert rest == [safe, d2]


def test_exploit_branch_prefers_stop_over_destructive_after_k_d() -> None:
    # The stop ranks below the destructive action and below K_T, yet wins once K_D destructive actions ran.
    d1, d2, stop = item(DESTRUCTIVE, 0.8), item(DESTRUCTIVE, 0.7), item(TERMINATING, 0.2)
    chosen, rest = select([d1, d2, stop], terminating=0, destruction=1)
    assert chosen is stop
    assert rest == [d1, d2]  # the popped destructive item is kept, unlike the paper's pseudocode


def test_exploit_branch_with_only_stops_below_k_t_falls_through() -> None:
    stops = [item(TERMINATING, r) for r in (0.1, 0.5, 0.3)]
    chosen, rest = select(stops, budget=2, terminating=0)
    assert chosen is stops[1]
    assert rest == [stops[0], stops[2]]


def test_remaining_items_preserved_and_input_untouched() -> None:
    items = [item(SAFE, 0.3), item(DESTRUCTIVE, 0.9), item(TERMINATING, 0.5), item(SAFE, 0.6)]
    snapshot = list(items)
    chosen, rest = select(items)
    assert items == snapshot
    assert chosen is items[3]
    assert rest == [items[0], items[1], items[2]]
    assert len(rest) + 1 == len(items)


# ---- prune_frontier


def always(_: FrontierItem) -> bool:
    return True


def test_prune_under_budget_untouched() -> None:
    items = [item(DESTRUCTIVE, 0.1), item(DESTRUCTIVE, 0.2), item(SAFE, 0.3)]
    assert prune_frontier(items, budget=3, reachable=lambda _: False) == items


def test_prune_drops_unreachable_first() -> None:
    keep = [item(SAFE, 0.1, node=1), item(SAFE, 0.2, node=1)]
    lost = [item(SAFE, 0.9, node=2), item(SAFE, 0.8, node=2)]
    kept = prune_frontier([lost[0], keep[0], lost[1], keep[1]], budget=3, reachable=lambda i: i.node_id == 1)
    assert kept == keep  # the low-reward reachable items survive, the unreachable high ones do not


def test_prune_keeps_only_best_destructive_and_terminating() -> None:
    d1, d2, t1, t2, s = (item(DESTRUCTIVE, 0.3), item(DESTRUCTIVE, 0.6), item(TERMINATING, 0.5),
                         item(TERMINATING, 0.4), item(SAFE, 0.1))
    # This happens even when the frontier would then be under budget.
    assert prune_frontier([d1, d2, t1, t2, s], budget=4, reachable=always) == [d2, t1, s]


def test_prune_merges_duplicate_safe_items_with_summed_reward() -> None:
    a1 = item(SAFE, 0.2, node=1, text="click [5]")
    b = item(SAFE, 0.5, node=1, text="click [6]")
    a2 = item(SAFE, 0.4, node=1, text="click [5]")
    other_node = item(SAFE, 0.1, node=2, text="click [5]")
    kept = prune_frontier([a1, b, a2, other_node], budget=3, reachable=always)
    assert [(k.node_id, k.action_text) for k in kept] == [(1, "click [5]"), (1, "click [6]"), (2, "click [5]")]
    assert kept[0].reward == pytest.approx(0.6)
    assert kept[0].seq == a1.seq


def test_prune_merge_only_when_still_over_budget_then_drops_lowest() -> None:
    a1 = item(SAFE, 0.2, node=1, text="click [5]")
    a2 = item(SAFE, 0.2, node=1, text="click [5]")
    b, c, d = item(SAFE, 0.3), item(SAFE, 0.35), item(SAFE, 0.05)
    kept = prune_frontier([a1, b, a2, c, d], budget=2, reachable=always)
    # Merged a = 0.4 beats b and c; d and then b are dropped as the lowest.
    assert [k.action_text for k in kept] == ["click [5]", c.action_text]
    assert kept[0].reward == pytest.approx(0.4)


def test_prune_drops_lowest_safe_not_destructive_or_terminating() -> None:
    d, t = item(DESTRUCTIVE, 0.01), item(TERMINATING, 0.02)
    safe = [item(SAFE, r) for r in (0.5, 0.4, 0.9)]
    kept = prune_frontier([d, *safe, t], budget=3, reachable=always)
    assert kept == [d, safe[2], t]


def test_prune_ties_drop_newer_item() -> None:
    old, new = item(SAFE, 0.5, seq=1), item(SAFE, 0.5, seq=2)
    assert prune_frontier([new, old], budget=1, reachable=always) == [old]


def test_prune_budget_one_falls_back_to_lowest_reward_of_any_class() -> None:
    d, t = item(DESTRUCTIVE, 0.3), item(TERMINATING, 0.6)
    assert prune_frontier([d, t, item(SAFE, 0.9)], budget=1, reachable=always) == [t]


def test_prune_is_pure_and_checks_budget() -> None:
    items = [item(SAFE, 0.2, text="x"), item(SAFE, 0.3, text="x"), item(SAFE, 0.1)]
    snapshot = list(items)
    prune_frontier(items, budget=1, reachable=always)
    assert items == snapshot
    with pytest.raises(ValueError):
        prune_frontier(items, budget=0, reachable=always)
