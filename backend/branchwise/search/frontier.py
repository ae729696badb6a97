"""The frontier of unexecuted actions (WebOperator): which one runs next (Alg. 5) and what is dropped (Alg. 4).

Both functions are pure: they take the frontier as a sequence and return new lists, so the search loop owns the only
mutable copy and a test can replay any decision from its inputs. Navigation actions count as safe everywhere here
(`ActionClass.selection_class`, `runs_freely`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..actions import Action
from ..core.classes import ActionClass
from ..core.requests import ExpectedRequest
from ..observation.locator import Locator

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FrontierItem:
    """An action proposed at a node and scored before it ran."""

    node_id: int
    action: Action
    action_text: str
    action_class: ActionClass
    reward: float
    thought: str = ""
    # The element the action targets, located on the node's page; None for untargeted actions.
    locator: Locator | None = None
    reasons: tuple[str, ...] = ()
    # What the classifier knows the action sends: all its approval lets through the network gate.
    sends: tuple[ExpectedRequest, ...] = ()
    # The reward model's score per checklist item, shown to it again when judging the next step.
    progress: tuple[float, ...] = ()
    # Insertion order: ties on reward go to the older item, so selection is deterministic.
    seq: int = 0


class SelectionConfig(BaseModel):
    """Thresholds of WebOperator's selection policy (Alg. 5) and the frontier budget of Alg. 1/4.

    The paper names K_T, K_D and MIN_QUEUE_SIZE without values; the defaults below come from the authors' code
    (kagnlp/WebOperator, `ActionSelector` / `ActionQueueManager`), the budget from both the paper (§4: "frontier
    budget 4") and the code (`search_budget = 4`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # K_T: a stop may run (outside the fallbacks) only once this many expansions proposed one. Code: `n_candidates = 2`
    # ("discovered_solutions < n_candidates" defers a stop), so one lone stop proposal is never trusted on its own.
    k_t: int = Field(default=2, ge=0)
    # K_D: once this many destructive actions have run, a pending stop beats the next destructive action. Code: the
    # check is `n_destruct > 0`, i.e. K_D = 1: after one irreversible change, finish rather than change more.
    k_d: int = Field(default=1, ge=0)
    # B: the frontier size above which Alg. 4 prunes and Alg. 5 switches to its exploit branch.
    budget: int = Field(default=4, ge=1)
    # MIN_QUEUE_SIZE: B shrinks by one after each destructive action but not below this. Code: `max(1, budget - 1)`.
    min_budget: int = Field(default=1, ge=1)

    @model_validator(mode="after")
    def _min_not_above_budget(self) -> SelectionConfig:
        if self.min_budget > self.budget:
            raise ValueError(f"min_budget ({self.min_budget}) must not exceed budget ({self.budget})")
        return self

    def reduced_budget(self, budget: int) -> int:
        """Alg. 1 line 42: the budget after a destructive action ran, B <- max(B - 1, MIN_QUEUE_SIZE)."""
        return max(budget - 1, self.min_budget)


def _rank(item: FrontierItem) -> tuple[float, int]:
    """Sort key of the max-priority queue: highest reward first, ties to the older item (lower seq)."""
    return (-item.reward, item.seq)


def _best(indices: Sequence[int], items: Sequence[FrontierItem], action_class: ActionClass) -> int | None:
    """Index of the highest-ranked item of `action_class` among `indices` (the argmax lines of Alg. 5)."""
    found = [i for i in indices if items[i].action_class.selection_class is action_class]
    return min(found, key=lambda i: _rank(items[i])) if found else None


def select_action(
    items: Sequence[FrontierItem],
    *,
    config: SelectionConfig,
    budget: int,
    terminating_count: int,
    destruction_count: int,
) -> tuple[FrontierItem | None, list[FrontierItem]]:
    """WebOperator's Alg. 5: pick the next frontier item to run, by class first and reward second.

    Safe actions run first (best reward first) because they can be undone; destructive ones wait until nothing safe is
    left, and a stop waits until K_T expansions proposed one. When the frontier is over `budget` (the current B, which
    shrinks after destructive actions) or holds more than one destructive action, the policy exploits instead: the
    best-rewarded action runs even if destructive, since the frontier is about to be cut anyway.

    Returns the chosen item (None for an empty frontier) and every other item, in input order. Where the paper's
    pseudocode loses a popped item (the destructive one popped in line 9 when line 14's stop wins), it is kept here.
    """
    terminating, destructive, safe = ActionClass.TERMINATING, ActionClass.DESTRUCTIVE, ActionClass.SAFE
    stop_allowed = terminating_count >= config.k_t
    prefer_stop = destruction_count >= config.k_d

    def done(index: int | None, why: str) -> tuple[FrontierItem | None, list[FrontierItem]]:
        if index is None:
            log.debug("select_action: nothing to select from %d items", len(items))
            return None, list(items)
        log.debug("select_action: %s -> %s (node %d, reward %.3f)", why, items[index].action_text,
                  items[index].node_id, items[index].reward)
        return items[index], [item for i, item in enumerate(items) if i != index]

    # The queue as pop order; `deferred` is Alg. 5's deferred_queue, shared by both phases as in the paper.
    queue = sorted(range(len(items)), key=lambda i: _rank(items[i]))
    deferred: list[int] = []

    destructive_count = sum(1 for item in items if item.action_class.selection_class is destructive)
    if len(items) > budget or destructive_count > 1:
        # Phase 1 (lines 7-25): exploit the best reward; only stops below K_T are held back.
        while queue:
            index = queue.pop(0)
            cls = items[index].action_class.selection_class
            if cls is terminating and not stop_allowed:
                deferred.append(index)
            elif cls is destructive:
                # Line 13 pushes the deferred stops back; line 14 looks for any stop in the whole queue.
                queue.extend(deferred)
                deferred = []
                if prefer_stop:
                    stop = _best(queue, items, terminating)
                    if stop is not None:
                        return done(stop, "over budget, stop preferred after K_D destructive actions")
                return done(index, "over budget, best is destructive")
            else:
                queue.extend(deferred)
                return done(index, "over budget, best reward")

    # Phase 2 (lines 26-35): safe actions by reward, stops once K_T is met; everything else is deferred.
    while queue:
        index = queue.pop(0)
        cls = items[index].action_class.selection_class
        if cls is safe:
            return done(index, "best safe action")
        if cls is terminating and stop_allowed:
            return done(index, "stop proposed by at least K_T expansions")
        deferred.append(index)

    if not deferred:
        return done(None, "")
    # Lines 39-51: nothing safe is left. After K_D destructive actions a stop wins, else the best destructive action,
    # else (only stops below K_T remain) the best stop.
    if prefer_stop:
        stop = _best(deferred, items, terminating)
        if stop is not None:
            return done(stop, "no safe action, stop preferred after K_D destructive actions")
    best_destructive = _best(deferred, items, destructive)
    if best_destructive is not None:
        return done(best_destructive, "no safe action, best destructive")
    return done(min(deferred, key=lambda i: _rank(items[i])), "only deferred stops remain")


def prune_frontier(
    items: Sequence[FrontierItem],
    *,
    budget: int,
    reachable: Callable[[FrontierItem], bool],
) -> list[FrontierItem]:
    """WebOperator's frontier pruning (Alg. 4 with the order of §3.4) once the frontier exceeds `budget`.

    In order: drop items whose node can no longer be backtracked to (running them would need a replay that cannot
    work); keep only the best destructive and the best terminating item (one destructive action resets the tree and
    only one answer can be given, so the others are dead weight); then, if still over budget, merge duplicate safe
    items (same node and action text, rewards summed so agreement counts); then drop the lowest-reward safe items.
    If only destructive/terminating items are left and the budget is still exceeded (budget 1), Alg. 4's rule applies
    to them: drop the lowest reward. Survivors keep their input order; a merged item sits where its oldest member was.
    """
    if budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget}")
    if len(items) <= budget:
        return list(items)

    kept = [item for item in items if reachable(item)]
    if len(kept) < len(items):
        log.debug("prune_frontier: dropped %d unreachable items", len(items) - len(kept))

    # Best destructive and best terminating only (the "repetitive" class of §3.4 is not tracked here).
    best: dict[ActionClass, FrontierItem] = {}
    for item in kept:
        if not item.action_class.runs_freely:
            current = best.get(item.action_class)
            if current is None or _rank(item) < _rank(current):
                best[item.action_class] = item
    kept = [item for item in kept if item.action_class.runs_freely or best[item.action_class] is item]

    if len(kept) > budget:
        kept = _merge_duplicate_safe(kept)

    while len(kept) > budget:
        safe = [item for item in kept if item.action_class.runs_freely]
        pool = safe or kept
        worst = max(pool, key=_rank)
        log.debug("prune_frontier: dropping %s (reward %.3f)", worst.action_text, worst.reward)
        kept = [item for item in kept if item is not worst]
    return kept


def _merge_duplicate_safe(items: list[FrontierItem]) -> list[FrontierItem]:
    """Merge safe (and navigation) items with the same node and action text into the oldest one, summing rewards."""
    groups: dict[tuple[int, str], list[FrontierItem]] = {}
    for item in items:
        if item.action_class.runs_freely:
            groups.setdefault((item.node_id, item.action_text), []).append(item)
    merged: list[FrontierItem] = []
    for item in items:
        if not item.action_class.runs_freely:
            merged.append(item)
            continue
        group = groups[(item.node_id, item.action_text)]
        oldest = min(group, key=lambda member: member.seq)
        if item is not oldest:
            continue
        if len(group) > 1:
            log.debug("prune_frontier: merged %d copies of %s at node %d", len(group), item.action_text, item.node_id)
        merged.append(dataclasses.replace(oldest, reward=sum(member.reward for member in group)))
    return merged
