"""The search tree: one node per page state reached, the action that led there, and what search learned about it.

Node ids are small integers in creation order, so runs can be printed, stored and drawn by id. A node keeps its
observation (text and PageView) so that backtracking can compare a replayed page with what was seen the first time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ..actions import Action
from ..core.classes import ActionClass
from ..core.status import NodeStatus
from ..observation import PageView
from ..observation.locator import Locator
from .validate import ActionSpace


@dataclass
class Node:
    id: int
    parent_id: int | None
    depth: int
    url: str
    title: str = ""
    text: str = ""
    page: PageView | None = None
    # Tab URLs in the agent's order and the index of the tab the page above is in.
    tabs: tuple[str, ...] = ()
    active_tab: int = 0
    # What the state allows beyond its elements (scrolling, history, tabs), for validating actions proposed here.
    space: ActionSpace = field(default_factory=ActionSpace)
    # The action from the parent that led here, the element it targeted (located on the parent's page) and its class.
    action: Action | None = None
    action_text: str = ""
    action_locator: Locator | None = None
    action_class: ActionClass | None = None
    thought: str = ""
    # The process reward of that action (action_aware) and the value of this state (best_first).
    reward: float | None = None
    value: float | None = None
    # The reward model's per-item checklist scores for the action that led here (action_aware).
    progress: tuple[float, ...] = ()
    # None until checked: the page survives a reload and its URL differs from the parent's.
    checkpoint: bool | None = None
    status: NodeStatus = "open"
    # Why the node is dead or invalid, for whoever reads the run later (`branchwise show`, the side panel's tree).
    note: str = ""
    answer: str | None = None
    children: list[int] = field(default_factory=list)
    # The page as replay and revisits compare it (URL without fragment and outline; `snapshot.state_key`); "" unknown.
    state: str = ""
    # Why the browser cannot be brought back here (a replay failed): other actions proposed here are not tried.
    unreachable: str = ""
    # The earlier node this one shows the same page as: a revisit, not explored again.
    same_as: int | None = None

    @property
    def is_root(self) -> bool:
        return self.parent_id is None


class SearchTree:
    def __init__(self) -> None:
        self.nodes: dict[int, Node] = {}
        self.root_id: int = 0
        # The lowest id a new node may get: a resumed run holds only part of what it recorded, and ids stay unique.
        self.first_free: int = 0

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, node_id: int) -> Node:
        return self.nodes[node_id]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def _next_id(self) -> int:
        return max(max(self.nodes, default=-1) + 1, self.first_free)

    def add_root(self, node: Node) -> Node:
        node.id, node.parent_id, node.depth = self._next_id(), None, 0
        self.nodes[node.id] = node
        self.root_id = node.id
        return node

    def add_child(self, parent_id: int, node: Node) -> Node:
        parent = self.nodes[parent_id]
        node.id, node.parent_id, node.depth = self._next_id(), parent_id, parent.depth + 1
        self.nodes[node.id] = node
        parent.children.append(node.id)
        return node

    def path(self, node_id: int) -> list[Node]:
        """The nodes from the current root down to node_id (inclusive)."""
        chain: list[Node] = []
        current: int | None = node_id
        while current is not None:
            node = self.nodes[current]
            chain.append(node)
            if current == self.root_id:
                break
            current = node.parent_id
        chain.reverse()
        if chain[0].id != self.root_id:
            raise ValueError(f"node {node_id} is not below the root {self.root_id}")
        return chain

    def lineage(self, node_id: int) -> list[Node]:
        """Every node from the first root to node_id, across re-rootings: the history prompts show."""
        chain = [self.nodes[node_id]]
        while chain[-1].parent_id is not None:
            chain.append(self.nodes[chain[-1].parent_id])
        return chain[::-1]

    def is_below_root(self, node_id: int) -> bool:
        try:
            self.path(node_id)
        except ValueError:
            return False
        return True

    def nearest_checkpoint(self, node_id: int) -> Node | None:
        """The deepest verified checkpoint on the path to node_id, the root included; None when there is none.

        Replay opens that node's URL: from anything else the URL alone does not rebuild the state (a form filled in,
        a sort order chosen), so a replay from it would silently start somewhere else.
        """
        for node in reversed(self.path(node_id)):
            if node.checkpoint:
                return node
        return None

    def replay_path(self, node_id: int) -> tuple[Node, list[Node]] | None:
        """The checkpoint to open and the nodes whose actions must be replayed from it, in order; None without one."""
        start = self.nearest_checkpoint(node_id)
        if start is None:
            return None
        chain = self.path(node_id)
        return start, chain[[n.id for n in chain].index(start.id) + 1:]

    def revisit_of(self, node: Node) -> Node | None:
        """An earlier node below the root that shows the same page as `node` (same `state`), or None."""
        if not node.state:
            return None
        for other in self.subtree(self.root_id):
            if (other.id != node.id and other.state == node.state and other.same_as is None
                    and other.status not in ("dead", "invalid", "terminal")):
                return other
        return None

    def reroot(self, node_id: int) -> None:
        """After a destructive action: its result is the new root and every other state becomes unreachable."""
        keep = {n.id for n in self.subtree(node_id)}
        for node in self.nodes.values():
            if node.id not in keep and node.status not in ("terminal",):
                left = f"left behind: #{node_id} changed the site"
                node.status, node.note = "invalid", f"{node.note}; {left}" if node.note else left
        self.root_id = node_id

    def subtree(self, node_id: int) -> Iterator[Node]:
        stack = [node_id]
        while stack:
            node = self.nodes[stack.pop()]
            yield node
            stack.extend(reversed(node.children))
