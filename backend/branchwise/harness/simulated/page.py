"""The page as the simulated model reads it: the elements of an observation text (the format of observation/render)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

# A text as observation/render's `quote` writes it: in single quotes (a ' inside escaped) or in double quotes.
QUOTED = r"'(?:[^'\\]|\\.)*'|\"[^\"]*\""
# `[12] link 'Home'`, `[3] textbox "Bob's notes" value: 'x' focused: True`.
_LINE = re.compile(rf"^\t*\[(?P<id>\d+)\] (?P<role>\S+) (?P<name>{QUOTED})(?P<rest>.*)$")
_VALUE = re.compile(rf"^ value: (?P<value>{QUOTED}|\S+)")
_CHECKED = re.compile(r"\bchecked: (?P<state>\S+)", re.I)
_URL = re.compile(r"^URL: (?P<url>\S+)", re.M)

CLICKABLE = frozenset({"link", "button", "checkbox", "radio", "tab", "menuitem", "switch", "option"})
TYPEABLE = frozenset({"textbox", "searchbox", "spinbutton", "combobox"})


def unquote(text: str) -> str:
    """The text `quote` wrote (a bare word as it is); only single quotes escape what they hold."""
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("\\'", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


@dataclass(frozen=True)
class Element:
    id: int
    role: str
    name: str
    # The field's text or the chosen option; None when the line shows no value. A redacted value is its bare mask.
    value: str | None = None
    checked: bool = False

    @property
    def interactive(self) -> bool:
        return self.role in CLICKABLE or self.role in TYPEABLE


@dataclass(frozen=True)
class Page:
    url: str
    elements: tuple[Element, ...]

    def find(self, role: str | None, name: str | None) -> Element | None:
        """The first element with this role and exact name, as a model would pick it from the tree."""
        return next((e for e in self.elements if e.role == role and e.name == name), None)

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""


def parse_page(text: str) -> Page:
    """The URL and elements of an observation text; lines that are not elements are skipped."""
    url = _URL.search(text)
    elements: list[Element] = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        rest = match["rest"]
        value = _VALUE.match(rest)
        checked = _CHECKED.search(rest)
        elements.append(Element(id=int(match["id"]), role=match["role"], name=unquote(match["name"]),
                                value=unquote(value["value"]) if value else None,
                                checked=checked is not None and checked["state"].lower() == "true"))
    return Page(url=url["url"] if url else "", elements=tuple(elements))
