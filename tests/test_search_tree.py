"""SearchTree: ids and depths, paths from the current root, checkpoints, replay plans and rerooting."""

from __future__ import annotations

import pytest

from branchwise.search.tree import Node, SearchTree


def node(url: str = "https://shop.example/", checkpoint: bool | None = None) -> Node:
    """A fresh node; the tree assigns its id, parent and depth."""
    return Node(id=-1, parent_id=None, depth=-1, url=url, checkpoint=checkpoint)


def chain(tree: SearchTree, parent: int, *checkpoints: bool | None) -> list[int]:
    """A line of children under `parent`, one per checkpoint flag; their ids in order."""
    made: list[int] = []
    for flag in checkpoints:
        parent = tree.add_child(parent, node(checkpoint=flag)).id
        made.append(parent)
    return made


def start_of(tree: SearchTree, node_id: int) -> Node:
    found = tree.nearest_checkpoint(node_id)
    assert found is not None
    return found


def plan_of(tree: SearchTree, node_id: int) -> tuple[Node, list[Node]]:
    plan = tree.replay_path(node_id)
    assert plan is not None
    return plan


def ids(nodes: list[Node]) -> list[int]:
    return [n.id for n in nodes]


def sample_tree() -> SearchTree:
    """0 -> (1 -> (3, 4), 2 -> 5), built in id order."""
    tree = SearchTree()
    tree.add_root(node())
    for parent in (0, 0, 1, 1, 2):
        tree.add_child(parent, node())
    return tree


def test_ids_follow_creation_order_and_depth_follows_the_parent() -> None:
    tree = SearchTree()
    root = tree.add_root(Node(id=99, parent_id=7, depth=5, url="https://a.example/"))
    assert (root.id, root.parent_id, root.depth, root.is_root) == (0, None, 0, True)
    child = tree.add_child(0, node())
    grandchild = tree.add_child(child.id, node())
    sibling = tree.add_child(0, node())
    assert [(n.id, n.parent_id, n.depth) for n in (child, grandchild, sibling)] == [(1, 0, 1), (2, 1, 2), (3, 0, 1)]
    assert not child.is_root
    assert tree[0].children == [1, 3] and tree[1].children == [2]
    assert len(tree) == 4 and ids(list(tree)) == [0, 1, 2, 3]
    assert tree.root_id == 0


def test_path_runs_from_the_root_to_the_node() -> None:
    tree = sample_tree()
    assert ids(tree.path(4)) == [0, 1, 4]
    assert ids(tree.path(5)) == [0, 2, 5]
    assert ids(tree.path(0)) == [0]
    assert all(tree.is_below_root(n.id) for n in tree)


def test_nearest_checkpoint_is_the_deepest_checkpoint_on_the_path() -> None:
    tree = SearchTree()
    tree.add_root(node())
    a, b, c, d = chain(tree, 0, True, None, True, False)
    assert start_of(tree, d).id == c
    assert start_of(tree, c).id == c
    assert start_of(tree, b).id == a


def test_no_checkpoint_on_the_path_means_no_replay_start_not_the_root() -> None:
    tree = SearchTree()
    tree.add_root(node(checkpoint=False))
    last = chain(tree, 0, None, False, None)[-1]
    assert tree.nearest_checkpoint(last) is None and tree.replay_path(last) is None
    # A checkpoint on another branch does not count.
    tree.add_child(0, node(checkpoint=True))
    assert tree.nearest_checkpoint(last) is None
    # The root counts once it is verified like any other node.
    tree[0].checkpoint = True
    assert start_of(tree, last).id == 0


def test_replay_path_starts_at_the_checkpoint_and_lists_the_steps_after_it() -> None:
    tree = SearchTree()
    tree.add_root(node(checkpoint=True))
    a, b, c, d = chain(tree, 0, None, True, None, False)
    start, steps = plan_of(tree, d)
    assert (start.id, ids(steps)) == (b, [c, d])
    start, steps = plan_of(tree, b)
    assert (start.id, steps) == (b, [])
    start, steps = plan_of(tree, a)
    assert (start.id, ids(steps)) == (0, [a])


def test_a_revisit_is_an_earlier_live_node_with_the_same_state() -> None:
    tree = sample_tree()
    for n, state in zip(tree, ["A", "B", "C", "D", "A", "E"], strict=True):
        n.state = state
    assert (twin := tree.revisit_of(tree[4])) is not None and twin.id == 0
    assert tree.revisit_of(tree[1]) is None
    tree[4].state = ""
    assert tree.revisit_of(tree[4]) is None
    tree[3].state, tree[3].status = "B", "dead"
    assert tree.revisit_of(tree[1]) is None


def test_subtree_is_depth_first_in_child_order() -> None:
    tree = sample_tree()
    assert ids(list(tree.subtree(0))) == [0, 1, 3, 4, 2, 5]
    assert ids(list(tree.subtree(2))) == [2, 5]
    assert ids(list(tree.subtree(4))) == [4]


def test_reroot_invalidates_everything_outside_the_new_subtree() -> None:
    tree = sample_tree()
    tree[3].status = "expanded"
    tree.reroot(1)
    assert tree.root_id == 1
    assert {n.id: n.status for n in tree} == {
        0: "invalid", 1: "open", 2: "invalid", 3: "expanded", 4: "open", 5: "invalid",
    }
    assert tree[2].note == "left behind: #1 changed the site"
    assert tree[3].note == "", "a node that stays in the tree keeps no note"
    tree[4].note = "failed: the element is no longer on the page"
    tree.reroot(3)
    assert tree[4].note == "failed: the element is no longer on the page; left behind: #3 changed the site"


def test_reroot_keeps_terminal_answers_outside_the_subtree() -> None:
    tree = sample_tree()
    tree[5].status = "terminal"
    tree.reroot(1)
    assert (tree[5].status, tree[2].status) == ("terminal", "invalid")


def test_paths_after_reroot_start_at_the_new_root() -> None:
    tree = sample_tree()
    tree[0].checkpoint = tree[1].checkpoint = True
    tree.reroot(1)
    assert ids(tree.path(4)) == [1, 4]
    # The old root was a checkpoint, but replay now starts at the new root.
    assert start_of(tree, 4).id == 1
    start, steps = plan_of(tree, 4)
    assert (start.id, ids(steps)) == (1, [4])
    for old in (0, 2, 5):
        assert not tree.is_below_root(old)
        with pytest.raises(ValueError, match=f"node {old} is not below the root 1"):
            tree.path(old)
    assert tree.is_below_root(3)
