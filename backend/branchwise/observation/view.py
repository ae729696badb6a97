"""process(): an Observation becomes a PageView, the text for the model plus what the rest of the backend needs."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from branchwise.gcpause import cyclic_gc_paused
from branchwise.observation.config import ObservationConfig
from branchwise.observation.ids import assign_ids
from branchwise.observation.locator import Locator, LocatorIndex, LocatorStep, build_index, find
from branchwise.observation.prune import KeptNode, prune
from branchwise.observation.render import header_lines, join_page, node_line, ordered_tabs
from branchwise.observation.tree import RawNode, RawTree, build_tree
from branchwise.protocol import MAX_CLICKABLE, ElementRef, Observation

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ElementInfo:
    """One printed line. `value` is already redacted when `redacted` is set; `props` are the kept AX properties.
    `sensitive`: a password or payment-card field, filled or not (what the agent types there is masked everywhere)."""

    id: int
    role: str
    name: str
    value: str
    redacted: bool
    props: Mapping[str, str]
    backend_node_id: int
    target: str | None
    frame_id: str
    locator: Locator
    parent: int | None
    children: tuple[int, ...]
    depth: int
    sensitive: bool = False
    # Where the element is laid out, in CSS pixels from the top of the page (its own box, else its nearest laid-out
    # ancestor's); None: not known (an out-of-process frame, or an extension that sends no layout).
    top: int | None = None
    height: int = 0
    # A click on it can do something: it is, or lies inside, a control or an element with a click listener
    # (observation/prune.py). True when not known.
    reacts: bool = True

    @property
    def ref(self) -> ElementRef:
        """Where the extension finds this element (built on demand: most elements are never acted on)."""
        return ElementRef(backend_node_id=self.backend_node_id, target=self.target)


@dataclass(frozen=True, slots=True)
class PageView:
    text: str
    url: str
    title: str
    # Tab ids in the order of the `Tab i` header, so `tab_focus [i]` means tab_ids[i].
    tab_ids: tuple[int, ...]
    elements: Mapping[int, ElementInfo]
    node_count_raw: int
    index: LocatorIndex
    # `text` in parts: its header (tabs, URL, any dialog) and one line per element, in the order of `elements`.
    header: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()

    def find(self, locator: Locator) -> int | None:
        """The id of the element `locator` points at in this page, or None when absent or ambiguous."""
        return find(locator, self.index)

    def ref(self, element_id: int) -> ElementRef:
        return self.elements[element_id].ref

    def descendants(self, element: ElementInfo) -> Iterator[ElementInfo]:
        """The lines under `element`, in document order."""
        stack = list(reversed(element.children))
        while stack:
            child = self.elements.get(stack.pop())
            if child is not None:
                yield child
                stack.extend(reversed(child.children))


def _locator_rows(nodes: list[KeptNode]) -> list[tuple[int, str, str, tuple[LocatorStep, ...], str | None]]:
    rows = []
    heading: str | None = None
    for node in nodes:
        rows.append((node.id, node.raw.role, node.raw.name, node.ancestors, heading))
        if node.raw.role == "heading":
            heading = node.raw.name
    return rows


def process(
    observation: Observation,
    config: ObservationConfig | None = None,
    sensitive: Collection[ElementRef] = (),
) -> PageView:
    """Build, prune, redact and render the observed page.

    `sensitive` names extra elements whose values must be masked, for fields only the DOM can identify (for example
    `autocomplete="cc-number"` under a neutral label).
    """
    config = config or ObservationConfig()
    started = time.perf_counter()
    with cyclic_gc_paused():
        view = _process(observation, config, sensitive)
    log.debug("observation of %s: %d AX nodes -> %d lines in %.1f ms", observation.url, view.node_count_raw,
              len(view.elements), (time.perf_counter() - started) * 1000)
    return view


def _process(observation: Observation, config: ObservationConfig, sensitive: Collection[ElementRef]) -> PageView:
    tree = build_tree(observation.frames)
    ids = assign_ids(observation.frames)
    extra = frozenset((ref.target, ref.backend_node_id) for ref in sensitive)
    clickable = frozenset((frame.target, node_id)
                          for frame in observation.frames for node_id in frame.clickable_node_ids)
    # A target's list is complete unless it is empty (no snapshot) or cut at the extension's cap.
    listeners_known = frozenset(frame.target for frame in observation.frames
                                if 0 < len(frame.clickable_node_ids) < MAX_CLICKABLE)
    nodes = prune(tree, ids, config, extra, clickable, listeners_known)
    index = build_index(_locator_rows(nodes))
    boxes = _placed(tree, _boxes(observation))
    elements = {}
    for node in nodes:
        box = boxes.get(id(node.raw), (None, 0))
        elements[node.id] = ElementInfo(
            id=node.id,
            role=node.raw.role,
            name=node.raw.name,
            value=node.value,
            redacted=node.redacted,
            props=node.props,
            backend_node_id=node.backend_id,
            target=node.raw.target,
            frame_id=node.raw.frame_id,
            locator=index.locators[node.id],
            parent=node.parent,
            children=tuple(node.children),
            depth=node.depth,
            sensitive=node.sensitive,
            top=box[0],
            height=box[1],
            reacts=node.reacts,
        )
    header = tuple(header_lines(observation))
    lines = tuple(node_line(node, config) for node in nodes)
    return PageView(
        text=join_page(header, lines),
        url=observation.url,
        title=observation.title,
        tab_ids=tuple(tab.tab_id for tab in ordered_tabs(observation)),
        elements=elements,
        node_count_raw=tree.node_count,
        index=index,
        header=header,
        lines=lines,
    )


def _placed(tree: RawTree, boxes: dict[tuple[str | None, int], tuple[int | None, int]],
            ) -> dict[int, tuple[int | None, int]]:
    """Each AX node's (by `id()`) layout box: its element's own, else its nearest laid-out ancestor's (text runs,
    nodes of a frame the extension sent no layout for)."""
    placed: dict[int, tuple[int | None, int]] = {}
    if not boxes:
        return placed
    stack: list[tuple[RawNode, tuple[int | None, int]]] = [(tree.root, (None, 0))]
    while stack:
        node, inherited = stack.pop()
        own = boxes.get((node.target, node.backend_id)) if node.backend_id is not None else None
        box = own or inherited
        placed[id(node)] = box
        stack.extend((child, box) for child in node.children)
    return placed


def _boxes(observation: Observation) -> dict[tuple[str | None, int], tuple[int | None, int]]:
    """(target, backend node id) -> (top, height) of every laid-out element the extension reported."""
    boxes: dict[tuple[str | None, int], tuple[int | None, int]] = {}
    for frame in observation.frames:
        flat = frame.node_bounds
        for i in range(0, len(flat) - 2, 3):
            boxes[(frame.target, flat[i])] = (flat[i + 1], max(0, flat[i + 2]))
    return boxes
