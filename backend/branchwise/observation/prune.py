"""Which AX nodes become lines, in the spirit of WebArena and BrowserGym, without ever losing an element.

A node is either kept (one line), lifted (no line; its children take its place) or dropped with its subtree.
- dropped: InlineTextBox, LineBreak and ListMarker (they repeat their parent's text or are bullets); the internals of
  a native text field (its value is printed as `value:`); the content of a redacted field;
- lifted: ignored nodes (their non-ignored descendants stay), nodes without a backendDOMNodeId (nothing to act on),
  a child frame's document node (its Iframe node already stands for it), and nameless nodes of the container roles
  below that have no printed property and cannot take the focus (a focusable box is something to act on);
- StaticText is dropped when it is blank or when it repeats, word for word, the name of its nearest kept ancestor
  whose name comes from its content (a link's own label; not a dialog's aria-label). WebArena also drops a text found
  in any of the 3 lines before it; that lost a clickable word quoted by the instruction above it, an instruction's
  first word found in the page title, and typed characters, so text elsewhere on the page never counts. Text inside
  a <label> (LabelText) is also dropped when the next line is a control whose name contains it: `textbox 'Email'`
  already says it.

Each line also records whether a click on it can do anything (`reacts`): it is a control, can take the focus (other
than a landmark, heading or other structure, focusable as a skip link's target), has a click listener (DOMSnapshot's
isClickable), or lies inside something that is or has one (text in a link, a row that listens for clicks, anything
under an app's root element, where React listens for its components' clicks). A listener on the document itself does
not count: nearly every page has one (analytics, menus that close on an outside click, delegation to its buttons and
links), so it says nothing about what a click on a heading does. A target whose listeners are not known (no DOM
snapshot, or one cut at its cap) reacts everywhere.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from branchwise.observation.config import ObservationConfig
from branchwise.observation.ids import IdMap
from branchwise.observation.locator import CONTEXT_ROLES, LocatorStep
from branchwise.observation.redact import is_sensitive_field
from branchwise.observation.tree import RawNode, RawTree

log = logging.getLogger(__name__)

# An element by its CDP target (None: the tab itself) and backend DOM node id.
NodeKey = tuple[str | None, int]
# The property a nameless box kept for its click listener is printed with.
CLICKABLE = "clickable"

DROPPED_ROLES = frozenset({"InlineTextBox", "LineBreak", "ListMarker"})
LIFTED_WHEN_NAMELESS = frozenset({
    # WebArena's list
    "generic", "img", "image", "list", "strong", "paragraph", "banner", "navigation", "Section", "LabelText", "Legend",
    "listitem",
    # the same kind of carrier without meaning of its own
    "none", "presentation", "emphasis", "MenuListPopup", "Abbr", "time", "code", "mark", "subscript", "superscript",
    "deletion", "insertion", "blockquote", "Pre", "figure", "Figcaption", "DescriptionList", "term", "definition",
    "Ruby", "RubyAnnotation", "SvgRoot", "sectionheader", "sectionfooter",
})
TEXT_FIELD_ROLES = frozenset({"textbox", "searchbox", "spinbutton", "combobox"})
# Roles a click acts on by their nature (native controls, ARIA widgets, a <label> that clicks its field), whatever the
# DOM says about listeners. Not an iframe: what it holds is a page of its own, judged line by line.
CONTROL_ROLES = frozenset({
    "link", "button", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "option",
    "treeitem", "textbox", "searchbox", "combobox", "listbox", "slider", "spinbutton", "LabelText",
    "DisclosureTriangle", "DisclosureTriangleGrouped", "MenuListOption", "PopUpButton", "ToggleButton", "ColorWell",
    "DateTime", "InputTime", "video", "audio",
})
# Roles whose focus is a place to read from, not a control: a skip link's target (`<main tabindex="-1">`), a region or
# dialog focused by script. A click on them, or on what they hold, only moves the focus there. (A focusable row is
# left out: a mail list's rows are, and a click opens the mail.)
STRUCTURE_ROLES = frozenset({
    "main", "region", "article", "navigation", "complementary", "banner", "contentinfo", "search", "form", "heading",
    "list", "listitem", "paragraph", "document", "dialog", "alertdialog", "group", "Section", "feed", "StaticText",
})
# Roles whose name Chromium computes from their content (ARIA "name from: contents"; Chromium's own
# AXObject::SupportsNameFromContents), so their text children repeat it. Other names (aria-label, a group or dialog
# named by a label or heading inside, a document's title) are not made of the text: a clickable "Delete" in a dialog
# or button group named "Delete item" keeps its line. A fieldset's legend is printed twice; that costs a line, not an
# element.
NAME_FROM_CONTENT = frozenset({
    "button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "radio", "row", "rowheader", "switch", "tab", "tooltip", "treeitem",
    "DisclosureTriangle", "DisclosureTriangleGrouped", "LayoutTableCell", "doc-backlink", "doc-biblioref",
    "doc-glossref", "doc-noteref",
})


@dataclass(slots=True, eq=False)
class KeptNode:
    id: int
    raw: RawNode
    backend_id: int
    depth: int
    parent: int | None
    value: str
    redacted: bool
    props: dict[str, str]
    ancestors: tuple[LocatorStep, ...]
    children: list[int] = field(default_factory=list)
    # A password or payment-card field (filled or not): text typed into it is a secret (safety/secrets.py).
    sensitive: bool = False
    # A click on it can do something (see the module's docstring).
    reacts: bool = True


@dataclass(slots=True)
class _Visit:
    node: RawNode
    depth: int
    parent: KeptNode | None
    # Name of the nearest kept ancestor: its text children are dropped. Empty for documents and iframes, whose names
    # (the title) are not made of their content.
    parent_name: str
    ancestors: tuple[LocatorStep, ...]
    in_label: bool = False
    # Something around the node reacts to clicks, so a click on the node does too.
    in_control: bool = False


def shown_props(props: dict[str, str], config: ObservationConfig) -> list[tuple[str, str]]:
    """The properties printed on a line (without `value`), in the configured order."""
    shown: list[tuple[str, str]] = []
    for name in config.render_props:
        text = props.get(name)
        if text is None or name == "value":
            continue
        if text in ("False", "false") and name not in config.show_when_false:
            continue
        shown.append((name, text))
    return shown


def repeats_name(text: str, name: str) -> bool:
    """The text is the name or a run of whole words of it ("Order" of "Order 1001", not "l" of "Console"); a word
    boundary is asked for only where the text starts or ends with a word character ("$34.50" of "US$34.50")."""
    words = text.strip()
    if not words:
        return False
    before = r"(?<!\w)" if re.match(r"\w", words) else ""
    after = r"(?![\w\u0300-\u036f])" if re.search(r"\w$", words) else ""
    return re.search(before + re.escape(words) + after, name) is not None


class _Pruner:
    def __init__(self, ids: IdMap, config: ObservationConfig, extra_sensitive: frozenset[NodeKey],
                 clickable: frozenset[NodeKey], listeners_known: frozenset[str | None]):
        self.ids = ids
        self.config = config
        self.extra_sensitive = extra_sensitive
        self.clickable = clickable
        self.listeners_known = listeners_known
        self.kept_props = frozenset(config.render_props) | frozenset(config.keep_props)
        self.out: list[KeptNode] = []
        # A label's text waits for the next line: if that line is the control it names, the text is dropped.
        self.pending_label: KeptNode | None = None
        self.pending_parent: KeptNode | None = None

    def run(self, tree: RawTree) -> list[KeptNode]:
        seen: set[int] = set()
        stack = [_Visit(tree.root, 0, None, "", ())]
        while stack:
            visit = stack.pop()
            node = visit.node
            if id(node) in seen:  # a malformed tree can list a node under two parents
                continue
            seen.add(id(node))
            if node.role in DROPPED_ROLES:
                continue
            kept, descend = self.visit(visit)
            if not descend:
                continue
            ancestors = visit.ancestors
            if not node.ignored and node.role in CONTEXT_ROLES:
                ancestors = (*ancestors, LocatorStep(node.role, node.name))
            in_label = visit.in_label or node.role == "LabelText"
            in_control = kept.reacts if kept is not None else self.reacts(visit)
            child: tuple[int, KeptNode | None, str, tuple[LocatorStep, ...], bool, bool]
            if kept is not None:
                # A nameless kept box (focusable) passes its container's name on to the text inside it.
                parent_name = (node.name if node.role in NAME_FROM_CONTENT
                               else visit.parent_name if not node.name else "")
                child = (visit.depth + 1, kept, parent_name, ancestors, in_label, in_control)
            else:
                child = (visit.depth, visit.parent, visit.parent_name, ancestors, in_label, in_control)
            stack.extend(_Visit(node, *child) for node in reversed(node.children))
        self.flush_label()
        return self.out

    def visit(self, visit: _Visit) -> tuple[KeptNode | None, bool]:
        """Keep the node or not, and whether to look at its children."""
        node = visit.node
        if node.ignored or node.backend_id is None or (node.frame_root and self.config.lift_frame_roots):
            return None, True
        if node.role == "StaticText":
            self.flush_label()
            if node.name.strip() and not repeats_name(node.name, visit.parent_name):
                kept = self.make(visit, node.value, False, {})
                if visit.in_label:
                    self.pending_label, self.pending_parent = kept, visit.parent
                else:
                    self.append(kept, visit.parent)
            return None, False
        sensitive = is_sensitive_field(node) or (node.target, node.backend_id) in self.extra_sensitive
        redacted = self.config.redact and sensitive and bool(node.value)
        value = self.config.mask if redacted else node.value
        props = {k: v for k, v in node.props.items() if k in self.kept_props}
        if (not node.name and node.role in LIFTED_WHEN_NAMELESS and not value
                and not shown_props(props, self.config) and node.props.get("focusable") != "True"):
            if (node.target, node.backend_id) not in self.clickable or self.shows_inside(node):
                return None, True
            # A box with a click listener and nothing inside to click (an icon): its line says why it is there.
            props = {**props, CLICKABLE: "True"}
        if self.pending_label is not None and self.pending_label.raw.name in node.name:
            self.pending_label = None
        self.flush_label()
        kept = self.make(visit, value, redacted, props)
        kept.sensitive = sensitive
        self.append(kept, visit.parent)
        native_field = node.role in TEXT_FIELD_ROLES and node.props.get("editable") == "plaintext"
        return kept, not (redacted or native_field)

    def reacts(self, visit: _Visit) -> bool:
        """Whether a click on the node can do something: see the module's docstring. A document's focus and click
        listeners (every page has them) do not count."""
        node = visit.node
        if visit.in_control or node.target not in self.listeners_known:
            return True
        if node.role == "RootWebArea":
            return False
        return (node.role in CONTROL_ROLES
                or (node.props.get("focusable") == "True" and node.role not in STRUCTURE_ROLES)
                or (node.backend_id is not None and (node.target, node.backend_id) in self.clickable)
                or "expanded" in node.props or node.props.get("hasPopup", "false").lower() != "false")

    def shows_inside(self, box: RawNode) -> bool:
        """Whether something inside `box` gets a line (a text, a control, a named or clickable element): a click on it
        lands in the box too, so the box needs no line of its own (a row around its text, a card around its link, an
        app's root that takes every click by delegation)."""
        stack = list(box.children)
        while stack:
            node = stack.pop()
            if not node.ignored and node.backend_id is not None and (
                    (node.role == "StaticText" and node.name.strip())
                    or (node.role != "StaticText" and (node.name or node.role not in LIFTED_WHEN_NAMELESS))
                    or node.props.get("focusable") == "True" or (node.target, node.backend_id) in self.clickable):
                return True
            stack.extend(node.children)
        return False

    def make(self, visit: _Visit, value: str, redacted: bool, props: dict[str, str]) -> KeptNode:
        node = visit.node
        backend_id = node.backend_id
        assert backend_id is not None, "visit() lifts nodes without a DOM node"
        return KeptNode(
            id=self.ids.id_of(node.target, backend_id),
            raw=node,
            backend_id=backend_id,
            depth=visit.depth,
            parent=visit.parent.id if visit.parent else None,
            value=value,
            redacted=redacted,
            props=props,
            ancestors=visit.ancestors,
            reacts=self.reacts(visit),
        )

    def append(self, kept: KeptNode, parent: KeptNode | None) -> None:
        if parent is not None:
            parent.children.append(kept.id)
        self.out.append(kept)

    def flush_label(self) -> None:
        if self.pending_label is not None:
            self.append(self.pending_label, self.pending_parent)
            self.pending_label = self.pending_parent = None


def prune(
    tree: RawTree,
    ids: IdMap,
    config: ObservationConfig,
    extra_sensitive: frozenset[NodeKey] = frozenset(),
    clickable: frozenset[NodeKey] = frozenset(),
    listeners_known: frozenset[str | None] = frozenset(),
) -> list[KeptNode]:
    """The kept nodes in document order, each with its printed depth and its kept parent and children. `clickable`:
    the elements the DOM says respond to clicks (kept even where the AX tree gives them nothing to show), complete for
    the targets in `listeners_known`."""
    kept = _Pruner(ids, config, extra_sensitive, clickable, listeners_known).run(tree)
    log.debug("pruned %d AX nodes to %d lines", tree.node_count, len(kept))
    return kept
