"""Whether the text lost something to act on: the elements the DOM says respond to clicks that the model cannot reach.

An element the DOM marks clickable (DOMSnapshot's isClickable: a link, a click listener) can be acted on when it has a
line of its own, or when something inside it has one: a click there lands in the element too (a row around its text,
a card around its link, an app's root that takes every click by delegation). A <label> acts on the control it names:
it is reached when a control whose name holds the label's text has a line (the text's own line is dropped then).
Elements the accessibility tree leaves out or ignores (hidden, not rendered), and the frames the text leaves out (an
iframe hidden by its page), are not on the page for the model either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..protocol import AXNode, Observation
from .view import PageView


@dataclass(frozen=True)
class Unreached:
    target: str | None
    backend_node_id: int
    role: str
    name: str


def _text(value: object) -> str:
    return str(getattr(value, "value", "") or "")


def _below(node: AXNode, by_id: dict[str, AXNode]) -> Iterator[AXNode]:
    stack = [by_id[c] for c in node.childIds if c in by_id]
    while stack:
        child = stack.pop()
        yield child
        stack.extend(by_id[c] for c in child.childIds if c in by_id)


def _shown_frames(observation: Observation, shown: set[tuple[str | None, int]]) -> set[str]:
    """The frames whose content is in the text: the top frame, and each frame whose iframe element has a line."""
    target_of = {f.frame_id: f.target for f in observation.frames}
    frames = {f.frame_id for f in observation.frames if f.parent_frame_id is None}
    grew = True
    while grew:
        grew = False
        for f in observation.frames:
            parent = f.parent_frame_id
            if f.frame_id in frames or parent not in frames or f.owner_node_id is None:
                continue
            if (target_of.get(parent), f.owner_node_id) in shown:
                frames.add(f.frame_id)
                grew = True
    return frames


def _names_a_shown_control(label_content: list[AXNode], page: PageView) -> bool:
    text = " ".join(_text(n.name) for n in label_content if _text(n.role) == "StaticText").strip()
    controls = (e for e in page.elements.values() if e.role not in ("StaticText", "LabelText"))
    return bool(text) and any(text in e.name for e in controls)


def unreached_clickables(observation: Observation, page: PageView) -> list[Unreached]:
    """The clickable elements of `observation` that `page` (its processed text) gives the model no way to act on."""
    shown = {(e.target, e.backend_node_id) for e in page.elements.values()}
    frames = _shown_frames(observation, shown)
    lost: list[Unreached] = []
    for target in dict.fromkeys(f.target for f in observation.frames):
        in_target = [f for f in observation.frames if f.target == target]
        by_id = {n.nodeId: n for f in in_target for n in f.nodes}
        by_backend = {n.backendDOMNodeId: n for n in by_id.values() if n.backendDOMNodeId is not None}
        frame_of = {n.backendDOMNodeId: f.frame_id for f in in_target for n in f.nodes}
        for node_id in (i for f in in_target for i in f.clickable_node_ids):
            node = by_backend.get(node_id)
            if node is None or node.ignored or (target, node_id) in shown or frame_of[node_id] not in frames:
                continue
            below = list(_below(node, by_id))
            if any((target, n.backendDOMNodeId) in shown for n in below):
                continue
            if _text(node.role) == "LabelText" and _names_a_shown_control(below, page):
                continue
            lost.append(Unreached(target, node_id, _text(node.role), _text(node.name)))
    return lost
