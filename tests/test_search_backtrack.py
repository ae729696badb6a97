"""Backtracking starts only from a verified checkpoint (B4): the root is probed like any node, and without a
checkpoint on the path the backtrack is refused with a reason before any tab is opened."""

from __future__ import annotations

import asyncio

import pytest

from branchwise.actions import Click
from branchwise.search.backtrack import NaiveBacktracker, SpeculativeBacktracker, plan_replay
from branchwise.search.tree import Node, SearchTree


class Probe:
    """Answers from a fixed set of checkpoint node ids, recording which nodes it was asked about."""

    def __init__(self, checkpoints: set[int]) -> None:
        self.checkpoints = checkpoints
        self.asked: list[int] = []
        self.probes = 0

    async def check(self, tree: SearchTree, node: Node) -> bool:
        self.asked.append(node.id)
        node.checkpoint = node.id in self.checkpoints
        return node.checkpoint


class NoBrowser:
    """Any browser call fails the test: a refused backtrack must not open or touch a tab."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the browser was used ({name}) for a backtrack that cannot work")


class NoEnv(NoBrowser):
    pass


def tree_of(depth: int) -> SearchTree:
    tree = SearchTree()
    tree.add_root(Node(id=-1, parent_id=None, depth=0, url="https://shop.example/"))
    parent = 0
    for i in range(depth):
        parent = tree.add_child(parent, Node(id=-1, parent_id=None, depth=0, url="https://shop.example/",
                                             action=Click(i + 1), action_text=f"click [{i + 1}]")).id
    return tree


@pytest.mark.parametrize("backtracker", ["speculative", "naive"])
def test_without_a_checkpoint_on_the_path_the_backtrack_is_refused_untouched(backtracker: str) -> None:
    tree, probe = tree_of(2), Probe(set())
    mover = (SpeculativeBacktracker(NoBrowser(), probe) if backtracker == "speculative"  # type: ignore[arg-type]
             else NaiveBacktracker(NoBrowser(), probe))  # type: ignore[arg-type]
    result = asyncio.run(mover.move(NoEnv(), tree, 2, Click(9)))  # type: ignore[arg-type]
    assert not result.committed and not result.working_tab_changed
    assert "no state on the way to #2 survives a reload" in result.reason
    # The root was probed like any other node, last (deepest first).
    assert probe.asked[-1] == 0


def test_the_root_counts_once_it_is_verified() -> None:
    tree, probe = tree_of(2), Probe({0})
    assert asyncio.run(_plan(tree, probe)) == (0, [1, 2])


async def _plan(tree: SearchTree, probe: Probe) -> tuple[int, list[int]] | None:
    plan = await plan_replay(tree, 2, probe)  # type: ignore[arg-type]
    return None if plan is None else (plan[0].id, [n.id for n in plan[1]])
