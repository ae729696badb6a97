"""WebArena's text serializer as the observe benchmark re-implements it for comparison (bench/webarena_text.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from branchwise.bench.webarena_text import interactive, serialize


def node(node_id: str, role: str | None, name: str | None, children: tuple[str, ...] = (),
         **properties: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"nodeId": node_id, "childIds": list(children),
                             "properties": [{"name": k, "value": {"value": v}} for k, v in properties.items()]}
    if role is not None:
        found["role"] = {"value": role}
    if name is not None:
        found["name"] = {"value": name}
    return found


NODES = [
    node("1", "RootWebArea", "Shop", ("2", "3", "9")),
    node("2", "generic", "", ("4", "5")),  # nameless, no properties: skipped, its children keep its depth
    node("3", "none", None, ("6",)),  # ignored (no name): skipped
    node("4", "link", "Cart", ("7",), focusable=True),  # focusable is not shown
    node("5", "StaticText", "Cart"),  # repeats the link above: dropped
    node("6", "heading", "Deals", ("8",), level=2),
    node("7", "StaticText", "Cart", ("10",)),
    node("8", "StaticText", "Fresh deals today"),
    node("9", "checkbox", "Agree", checked="false"),
    node("4", "link", "Duplicate of 4"),  # a repeated node: the first one stands
    node("10", "InlineTextBox", "Cart"),  # today's Chromium reports these; left out
]


def test_lines_depths_and_the_skipped_nodes() -> None:
    assert serialize(NODES).splitlines() == [
        "[1] RootWebArea 'Shop'",
        "\t[4] link 'Cart'",
        "\t[6] heading 'Deals'",
        "\t\t[8] StaticText 'Fresh deals today'",
        "\t[9] checkbox 'Agree' checked: false",
    ]


def test_interactive_elements_of_a_text() -> None:
    assert interactive(serialize(NODES)) == Counter({("link", "Cart"): 1, ("checkbox", "Agree"): 1})
    assert interactive("\t[12] button \"Bob's\" focused: True\n[3] StaticText 'x'") == Counter({("button", "Bob's"): 1})
