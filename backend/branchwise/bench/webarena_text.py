"""WebArena's text observation of a page, written anew from its published description, to compare sizes with ours.

WebArena (browser_env/processors.py: `parse_accessibility_tree`, then `clean_accesibility_tree`) walks the raw
`Accessibility.getFullAXTree` nodes depth first from the root: each node is a line `[nodeId] role 'name'` followed by
its properties as ` name: value`, except focusable, editable, readonly, level, settable, multiline and invalid, tab
indented by depth. A node without a role or name (ignored nodes) is skipped, and so is a nameless node without
properties whose role is generic, img, list, strong, paragraph, banner, navigation, Section, LabelText, Legend or
listitem; the children of a skipped node keep its depth. Then a StaticText line whose text appears in any of the 3
lines kept before it is dropped. The whole page, not only the viewport (`current_viewport_only` off, its default).
One departure, in WebArena's favour: the InlineTextBox nodes today's Chromium reports under each StaticText (repeating
its text) are left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

IGNORED_PROPERTIES = frozenset({"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"})
SKIPPED_WHEN_EMPTY = frozenset({"generic", "img", "list", "strong", "paragraph", "banner", "navigation", "Section",
                                "LabelText", "Legend", "listitem"})
INTERACTIVE_ROLES = frozenset({"link", "button", "textbox", "searchbox", "combobox", "checkbox", "radio", "menuitem",
                               "tab", "switch", "spinbutton", "slider", "option", "listbox", "menuitemcheckbox",
                               "menuitemradio", "treeitem"})
_STATIC_TEXT = re.compile(r"\[\d+\] StaticText (['\"])(.*)\1")
_LINE = re.compile(r"^\t*\[\d+\] (\S+) (['\"])(.*?)\2(?= |$)")


def _line(node: Mapping[str, Any]) -> str | None:
    """The node's line without indent, or None when WebArena skips it."""
    role = node.get("role", {}).get("value")
    name = node.get("name", {}).get("value")
    if not isinstance(role, str) or not isinstance(name, str) or role == "InlineTextBox":
        return None
    properties = [f" {p['name']}: {p['value']['value']}" for p in node.get("properties", [])
                  if p.get("name") not in IGNORED_PROPERTIES and "value" in p.get("value", {})]
    if not name.strip() and not properties and role in SKIPPED_WHEN_EMPTY:
        return None
    return f"[{node['nodeId']}] {role} {name!r}" + "".join(properties)


def serialize(nodes: Sequence[Mapping[str, Any]]) -> str:
    """WebArena's text for the raw nodes of one frame's tree."""
    by_id: dict[str, Mapping[str, Any]] = {}
    for node in nodes:
        by_id.setdefault(node["nodeId"], node)  # a few nodes are repeated in the raw tree
    if not nodes:
        return ""
    lines: list[str] = []
    stack: list[tuple[str, int]] = [(nodes[0]["nodeId"], 0)]
    while stack:
        node_id, depth = stack.pop()
        found = by_id.get(node_id)
        if found is None:
            continue
        line = _line(found)
        if line is not None:
            lines.append("\t" * depth + line)
        child_depth = depth + 1 if line is not None else depth
        stack.extend((child, child_depth) for child in reversed(found.get("childIds", [])))
    return "\n".join(_clean(lines))


def _clean(lines: list[str]) -> list[str]:
    kept: list[str] = []
    for line in lines:
        text = _STATIC_TEXT.search(line)
        if text is not None and any(text[2] in previous for previous in kept[-3:]):
            continue
        kept.append(line)
    return kept


def interactive(text: str) -> Counter[tuple[str, str]]:
    """The interactive elements a text shows, as (role, name), counted."""
    found: Counter[tuple[str, str]] = Counter()
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is not None and match[1] in INTERACTIVE_ROLES:
            found[(match[1], match[3])] += 1
    return found
