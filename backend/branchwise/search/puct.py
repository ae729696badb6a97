"""WebPilot's local MCTS bookkeeping, pure: values and visits per node, goal-oriented selection, maximal-value
backpropagation and the best state of a subtask's tree.

Selection (GOS) is PUCT with the LLM's value as the prior: argmax Q(s, a) + w·√(Σ_b N(s, b)) / (1 + N(s, a)), w = 5 in
the paper, Q on the appraiser's 0–10 scale. The +1 keeps a first child the appraiser liked from being abandoned for
untried ones, as UCT's infinite bonus would. A node with room for another child (fewer than `branches`, not at the
depth limit) also offers "a new child" as an option, valued at the node's own score (not the backpropagated Q, which
would always beat its own children) with no visits: the tree widens when a node's children score below the node.
A new node counts one visit once it is scored (it is on the path backpropagation walks), so selection descends through
scored nodes and expands where "a new child" wins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

# The option of expanding a node with one more child, as `select` names it.
NEW_CHILD = -1


@dataclass
class Stats:
    """Q (0–10) and visit counts of the nodes of one subtask's tree, by node id."""

    q: dict[int, float] = field(default_factory=dict)
    n: dict[int, int] = field(default_factory=dict)
    # The appraiser's score of each node itself, before backpropagation raised it to its best descendant's.
    own: dict[int, float] = field(default_factory=dict)

    def scored(self, node_id: int, score: float) -> None:
        self.own[node_id] = score
        self.q[node_id] = max(self.value(node_id), score)

    def value(self, node_id: int) -> float:
        return self.q.get(node_id, 0.0)

    def visits(self, node_id: int) -> int:
        return self.n.get(node_id, 0)


def puct(q: float, parent_visits: int, visits: int, w: float) -> float:
    """Q + w·√(ΣN)/(1 + N): the score selection maximises."""
    return q + w * math.sqrt(parent_visits) / (1 + visits)


def select(stats: Stats, node_id: int, children: Sequence[int], *, can_widen: bool, w: float) -> int:
    """The child of `node_id` to descend into, or NEW_CHILD to expand `node_id` with one more child. Ties go to the
    older child, and to widening last."""
    total = sum(stats.visits(c) for c in children)
    options = [(puct(stats.value(c), total, stats.visits(c), w), -k, c) for k, c in enumerate(children)]
    if can_widen:
        options.append((puct(stats.own.get(node_id, 0.0), total, 0, w), -len(children), NEW_CHILD))
    if not options:
        return NEW_CHILD
    return max(options)[2]


def backpropagate(stats: Stats, path: Sequence[int], value: float) -> None:
    """Every node on `path` (the subtask's root down to the new node's parent) is visited once more and keeps the
    highest value below it: Q(s) ← max(Q(s), Q(child)) (maximal-value backpropagation)."""
    for node_id in path:
        stats.n[node_id] = stats.visits(node_id) + 1
        stats.q[node_id] = max(stats.value(node_id), value)


def best_node(stats: Stats, candidates: Sequence[int]) -> int | None:
    """The scored candidate with the highest own score, the first listed on ties; None when none was scored."""
    scored = [(stats.own[c], -k, c) for k, c in enumerate(candidates) if c in stats.own]
    return max(scored)[2] if scored else None
