"""One tree out of the per-frame AX node lists of an Observation.

CDP returns every frame separately and a frame's `Iframe` node has no children, so each child frame's root is spliced
under the node whose backendDOMNodeId is the frame's `owner_node_id` in its parent frame.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from branchwise.protocol import AXNode, FrameTree

log = logging.getLogger(__name__)

# Never printed nor needed for structure; a third of a page's nodes, so not even converted.
SKIPPED_ROLES = frozenset({"InlineTextBox"})
# Tristate AX values arrive as strings; booleans as JSON booleans. Both become these words in the text.
_TRISTATE = MappingProxyType({"true": "True", "false": "False", "mixed": "mixed"})


@dataclass(slots=True, eq=False)
class RawNode:
    """An AX node with CDP's encodings flattened: plain strings, children linked, its frame and target attached."""

    role: str
    name: str
    value: str
    props: dict[str, str]
    ignored: bool
    backend_id: int | None
    target: str | None
    frame_id: str
    children: list[RawNode] = field(default_factory=list)
    # The document node of a child frame (its AX role is RootWebArea too).
    frame_root: bool = False


@dataclass(slots=True)
class RawTree:
    root: RawNode
    node_count: int


def clean_text(text: Any) -> str:
    """Collapse whitespace runs (newlines, tabs, nbsp) so every node fits on one line."""
    if text is None:
        return ""
    return " ".join(str(text).split())


def prop_text(value: Any) -> str | None:
    """The printable form of a property value; None for relations and other values without a printable form."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None or isinstance(value, (list, dict)):
        return None
    text = str(value)
    return _TRISTATE.get(text, text)


def _convert(node: AXNode, frame: FrameTree) -> RawNode:
    props: dict[str, str] = {}
    for prop in node.properties:
        text = prop_text(prop.value.value)
        if text is not None:
            props[prop.name] = text
    return RawNode(
        role=str(node.role.value) if node.role and node.role.value is not None else "",
        name=clean_text(node.name.value) if node.name else "",
        value=clean_text(node.value.value) if node.value else "",
        props=props,
        ignored=node.ignored,
        backend_id=node.backendDOMNodeId,
        target=frame.target,
        frame_id=frame.frame_id,
    )


@dataclass(slots=True)
class _Frame:
    source: FrameTree
    root: RawNode
    by_backend_id: dict[int, RawNode]


def _build_frame(frame: FrameTree) -> _Frame | None:
    nodes: dict[str, RawNode] = {}
    by_backend_id: dict[int, RawNode] = {}
    root_key: str | None = None
    for ax in frame.nodes:
        if ax.nodeId in nodes:  # Chromium occasionally repeats a node; the first copy wins
            continue
        if ax.role is not None and ax.role.value in SKIPPED_ROLES:
            continue
        raw = _convert(ax, frame)
        nodes[ax.nodeId] = raw
        if raw.backend_id is not None:
            by_backend_id.setdefault(raw.backend_id, raw)
        if root_key is None and ax.parentId is None:
            root_key = ax.nodeId
    if root_key is None:
        return None
    for ax in frame.nodes:
        parent = nodes.get(ax.nodeId)
        if parent is None or parent.children:  # skipped, or linked already (a repeated node)
            continue
        parent.children = [nodes[child] for child in ax.childIds if child in nodes]
    return _Frame(frame, nodes[root_key], by_backend_id)


def build_tree(frames: list[FrameTree]) -> RawTree:
    """Link every frame's nodes and splice child frames under their owner elements.

    The main frame is the first frame without a parent. A frame whose owner element is absent from its parent's AX
    tree, or ignored there, is hidden (display:none, aria-hidden: Chromium leaves the owner out, yet the frame's own
    nodes look visible) and is left out. A frame whose placement is unknown (no owner id, parent frame not captured)
    is appended under the main root rather than lost.
    """
    built: list[_Frame] = []
    for frame in frames:
        one = _build_frame(frame)
        if one is None:
            log.warning("frame %s has no root node; skipped", frame.frame_id)
        else:
            built.append(one)
    if not built:
        raise ValueError("observation has no AX nodes")
    by_id = {one.source.frame_id: one for one in built}
    main = next((one for one in built if one.source.parent_frame_id is None), built[0])
    for one in built:
        if one is main:
            continue
        one.root.frame_root = True
        source = one.source
        parent = by_id.get(source.parent_frame_id or "")
        if parent is None or source.owner_node_id is None:
            log.warning("frame %s: placement unknown (parent %s, owner %s); attached to the page root",
                        source.frame_id, source.parent_frame_id, source.owner_node_id)
            main.root.children.append(one.root)
            continue
        owner = parent.by_backend_id.get(source.owner_node_id)
        if owner is None or owner.ignored:
            log.debug("frame %s: owner %s hidden; frame left out", source.frame_id, source.owner_node_id)
            continue
        owner.children.append(one.root)
    return RawTree(root=main.root, node_count=sum(len(f.nodes) for f in frames))
