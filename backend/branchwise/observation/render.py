"""The text the model reads, in WebArena's format.

    Tab 0 (current): Acme Shop | Tab 1: Orders
    URL: http://shop.example/
    <blank line>
    [4] RootWebArea 'Acme Shop'
    \t[12] link 'Home'
    \t[3] searchbox 'Search' focused: True
    \t[76] textbox 'Password' value: ••••

WebArena joins the tabs with " | " on one line and prints `URL:` in its prompt template; both head the page here so
the observation stands on its own. Tabs are numbered by position (sorted by browser index), which is what
`tab_focus [i]` refers to; "current" is the observed tab, whatever the browser thinks is active. Names are quoted like
Python's repr: double quotes when the name holds an apostrophe. Free-text values are quoted the same way; a redacted
value is the bare mask, so it cannot be mistaken for the field's content.
"""

from __future__ import annotations

from collections.abc import Sequence

from branchwise.observation.config import ObservationConfig
from branchwise.observation.prune import KeptNode, shown_props
from branchwise.observation.tree import clean_text
from branchwise.protocol import Observation, TabInfo


def quote(text: str) -> str:
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return "'" + text.replace("'", "\\'") + "'"


def ordered_tabs(observation: Observation) -> list[TabInfo]:
    """The tab list as numbered for the model; the observed tab is always in it."""
    tabs = sorted(observation.tabs, key=lambda tab: tab.index)
    if not any(tab.tab_id == observation.tab_id for tab in tabs):
        tabs.append(TabInfo(tab_id=observation.tab_id, index=len(tabs), title=observation.title,
                            url=observation.url, active=True))
    return tabs


def header_lines(observation: Observation) -> list[str]:
    parts = []
    for position, tab in enumerate(ordered_tabs(observation)):
        if tab.tab_id == observation.tab_id:
            title = clean_text(observation.title or tab.title or observation.url)
            parts.append(f"Tab {position} (current): {title}")
        else:
            parts.append(f"Tab {position}: {clean_text(tab.title or tab.url)}")
    lines = [" | ".join(parts), f"URL: {observation.url}"]
    if observation.dialog is not None:
        lines.append(f"Dialog ({observation.dialog.dialog_type}): {quote(clean_text(observation.dialog.message))}")
    return lines


def node_line(node: KeptNode, config: ObservationConfig) -> str:
    indent = "\t" * node.depth
    parts = [f"{indent}[{node.id}] {node.raw.role} {quote(node.raw.name)}"]
    if node.value and "value" in config.render_props:
        parts.append(f"value: {node.value if node.redacted else quote(node.value)}")
    parts.extend(f"{name}: {text}" for name, text in shown_props(node.props, config))
    return " ".join(parts)


def join_page(header: Sequence[str], lines: Sequence[str]) -> str:
    """The observation text: the header, a blank line, then the element lines."""
    return "\n".join([*header, "", *lines])
