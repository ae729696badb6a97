"""A page too long for the model's prompt, shown around its viewport (WebArena's `current_viewport_only`).

The model sees the lines laid out in the viewport and, as far as the budget allows, the screens around it, always with
their ancestors (so indentation still reads as structure); above and below, one line per section (a heading and what
follows it up to the next) says how many links, buttons and fields lie there and how to reach them, and a line says
where the viewport is. Nothing interactive is dropped unsaid, and `scroll` changes what the model sees. An element
without a layout box of its own stands where its nearest laid-out ancestor does (observation/view.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from branchwise.observation.render import join_page
from branchwise.observation.view import ElementInfo, PageView
from branchwise.protocol import ScrollInfo

# What the outline counts in a section, and the word for several of each.
INTERACTIVE = {
    "link": "links", "button": "buttons", "textbox": "text fields", "searchbox": "search fields",
    "combobox": "drop-downs", "listbox": "lists", "checkbox": "checkboxes", "radio": "radio buttons",
    "switch": "switches", "slider": "sliders", "spinbutton": "number fields", "menuitem": "menu items", "tab": "tabs",
    "option": "options",
}
# Sections named in the outline on each side; the rest are summed up in one line.
MAX_SECTIONS = 8
# A viewport height to assume when the page does not report one.
DEFAULT_VIEWPORT = 800
# Widening the window half a screen at a time, it covers at most this many half screens more than the viewport.
MAX_WIDENINGS = 64


@dataclass
class _Section:
    title: str
    counts: Counter[str]
    lines: int = 0


class _Layout:
    """The page's elements in line order, with what every window needs computed once."""

    def __init__(self, page: PageView) -> None:
        self.page = page
        self.elements: list[ElementInfo] = list(page.elements.values())
        position = {e.id: i for i, e in enumerate(self.elements)}
        self.parent = [position[e.parent] if e.parent is not None else None for e in self.elements]
        # Each line's section: its title and the line of its heading (None: before the first heading).
        self.section: list[tuple[str, int | None]] = []
        section: tuple[str, int | None] = ("the top of the page", None)
        for i, element in enumerate(self.elements):
            if element.role == "heading":
                section = (f"heading '{element.name}'" if element.name else "a heading", i)
            self.section.append(section)

    def within(self, top: float, bottom: float) -> list[int]:
        """Lines of the elements whose box meets [top, bottom], with their ancestors."""
        keep: set[int] = set()
        for i, element in enumerate(self.elements):
            if element.top is None or (element.top <= bottom and element.top + element.height >= top):
                line: int | None = i
                while line is not None and line not in keep:
                    keep.add(line)
                    line = self.parent[line]
        return sorted(keep)

    def sections(self, lines: list[int], shown: set[int]) -> list[_Section]:
        """`lines` grouped under the heading each falls under, in page order, counted by role; a section whose
        heading is among the `shown` lines is "the rest of" it."""
        sections: list[_Section] = []
        for i in lines:
            title, heading = self.section[i]
            if heading in shown:
                title = f"the rest of {title}"
            if not sections or sections[-1].title != title:
                sections.append(_Section(title, Counter()))
            if self.elements[i].role in INTERACTIVE:
                sections[-1].counts[self.elements[i].role] += 1
            sections[-1].lines += 1
        return sections

    def render(self, chosen: list[int], scroll: ScrollInfo, top: float, bottom: float) -> str:
        shown = set(chosen)
        hidden = [i for i in range(len(self.elements)) if i not in shown]
        above = self.sections([i for i in hidden if (self.elements[i].top or 0) < top], shown)
        below = self.sections([i for i in hidden if (self.elements[i].top or 0) >= top], shown)
        lines = [_where(scroll, top, bottom)]
        if above:
            lines.append("Above this part of the page (scroll [up] to see it):")
            lines.extend(_outline(above[-MAX_SECTIONS:], len(above) - MAX_SECTIONS, "above"))
        lines.extend(self.page.lines[i] for i in chosen)
        if below:
            lines.append("Below this part of the page (scroll [down] to see it):")
            lines.extend(_outline(below[:MAX_SECTIONS], len(below) - MAX_SECTIONS, "below"))
        return join_page(self.page.header, lines)


def windowed_text(page: PageView, scroll: ScrollInfo, budget_chars: int) -> str | None:
    """The page's text around its viewport within `budget_chars` (as far as the viewport alone allows), or None when
    the page has no layout to go by."""
    if not page.lines or all(e.top is None for e in page.elements.values()):
        return None
    layout = _Layout(page)
    view = scroll.viewport_height or DEFAULT_VIEWPORT
    top, bottom = scroll.y, scroll.y + view
    chosen = layout.within(top, bottom)
    for _ in range(MAX_WIDENINGS):
        if len(chosen) == len(layout.elements) or (top <= 0 and bottom >= scroll.page_height):
            break
        wider = layout.within(top - view / 2, bottom + view / 2)
        if len(layout.render(wider, scroll, top - view / 2, bottom + view / 2)) > budget_chars:
            break
        chosen, top, bottom = wider, top - view / 2, bottom + view / 2
    return layout.render(chosen, scroll, top, bottom)


def _where(scroll: ScrollInfo, top: float, bottom: float) -> str:
    view = scroll.viewport_height or DEFAULT_VIEWPORT
    height = max(scroll.page_height, bottom)
    screen, screens = int(scroll.y // view) + 1, max(1, -(-int(height) // int(view)))
    return (f"[Part of a long page: {max(0, int(top)):,}-{int(min(bottom, height)):,} px of {int(height):,}; the "
            f"viewport is screen {screen} of {screens}]")


def _outline(sections: list[_Section], more: int, side: str) -> list[str]:
    lines = []
    for section in sections:
        held = ", ".join(f"{count} {INTERACTIVE[role] if count > 1 else role}"
                         for role, count in section.counts.most_common())
        lines.append(f"- {section.title}: {held or 'text only'} ({section.lines} lines)")
    if more > 0:
        lines.insert(0 if side == "above" else len(lines), f"- and {more} more sections {side}")
    return lines
