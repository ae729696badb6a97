"""Where a page stands in a task's reference solution, and the reference step's action on that page.

The position is the index of the next reference step to take (len(steps): all taken, answer now; None: the page is
off the reference path). It is known exactly when the page was reached by a reference step the model itself proposed
(the prompt's last action is one it remembers); otherwise it is read off the page: the latest step whose target is on
it, unless a field it fills comes earlier and is still empty, skipping steps whose effect the page already shows (a
field holding the text, a ticked box, the URL a goto opens).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...actions import SECRET_MASK, Action, Click, GoBack, Goto, Hover, Press, Scroll, SelectOption, Type
from ..tasks import SolutionStep
from .page import Element, Page

_PLACEHOLDER = re.compile(r"__[A-Z_]+__")
_FILLS = frozenset({"type", "select_option"})
_TICKS = frozenset({"checkbox", "radio"})
# What a masked value or typed secret is made of, as the backend shows it.
MASK_CHAR = "•"

# What identifies an action across prompts: kind, element and content. The element is its id (unique per page load)
# where a prompt shows the action as written, or its words (`link 'Forums'`) where a policy prompt's history names it
# so (policy/steps.py).
Signature = tuple[str, int | str | None, str]


def signature(action: Action, element: str | None = None) -> Signature:
    """`element`: the element's words, to identify the action by them instead of its id. A typed secret shows masked
    in the histories the backend sends, so any typed secret matches the mask."""
    content = ""
    if isinstance(action, Type):
        content = SECRET_MASK if action.secret or MASK_CHAR in action.text else action.text
    elif isinstance(action, SelectOption):
        content = "|".join(action.values)
    elif isinstance(action, Goto):
        content = action.url
    return type(action).__name__, action.element_id if element is None else element, content


def same_action(proposed: Action, reference: Action) -> bool:
    """`proposed` (as the backend shows it: a typed secret masked) is the reference action."""
    if isinstance(proposed, Type) and isinstance(reference, Type) and signature(proposed)[2] == SECRET_MASK:
        return (proposed.element_id, proposed.press_enter) == (reference.element_id, reference.press_enter)
    return signature(proposed) == signature(reference)


def goto_url(step: SolutionStep, page: Page) -> str:
    """A goto step's URL on this run's site: the placeholder becomes the current page's origin."""
    return _PLACEHOLDER.sub(page.origin, step.text or "", count=1)


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def target(step: SolutionStep, page: Page) -> Element | None:
    return page.find(step.role, step.name) if step.role else None


def applicable(step: SolutionStep, page: Page) -> bool:
    if step.action == "goto":
        return not _same_url(goto_url(step, page), page.url)
    return target(step, page) is not None


def done(step: SolutionStep, page: Page) -> bool:
    """The page shows the step's effect; only fills, ticks and gotos show one on the page they were taken on."""
    if step.action == "goto":
        return _same_url(goto_url(step, page), page.url)
    element = target(step, page)
    if element is None:
        return False
    if step.action in _FILLS:
        value = (element.value or "").strip()
        return value == (step.text or "").strip() or (MASK_CHAR in value and step.action == "type")
    return step.action == "click" and element.role in _TICKS and element.checked


def _fills_form(step: SolutionStep) -> bool:
    """A field filled before a later step on the same page (typing with Enter submits: it is a step of its own)."""
    return step.action in _FILLS and not step.enter


def _skip_done(steps: Sequence[SolutionStep], page: Page, index: int) -> int:
    while index < len(steps) and done(steps[index], page):
        index += 1
    return index


def page_position(steps: Sequence[SolutionStep], page: Page) -> int | None:
    """The position read off the page alone; None when no step's target is on it."""
    present = [i for i, step in enumerate(steps) if applicable(step, page) or done(step, page)]
    if not present:
        return None if steps else 0
    latest = present[-1]
    empty = next((i for i in present if i < latest and _fills_form(steps[i]) and not done(steps[i], page)), None)
    return _skip_done(steps, page, latest if empty is None else empty)


@dataclass(frozen=True)
class Position:
    index: int | None
    # Reached by reference steps from the start (the model remembers proposing the step that led here).
    on_path: bool


@dataclass
class Progress:
    """One task's reference steps and what the model remembers proposing: action signature -> positions after it."""

    steps: tuple[SolutionStep, ...]
    # A signature in words may take several steps (`click link 'Next'` on two pages of a listing): every position
    # after one is kept.
    after: dict[Signature, set[int]] = field(default_factory=dict)

    def position(self, page: Page, last_step: Signature | None, start: bool = False) -> Position:
        """`last_step`: the action that led here, as the prompt shows it; `start`: this is the task's starting page,
        where the reference solution begins. Of several positions the action may lead to, the earliest that fits
        the page: a step too many rather than an answer too early."""
        if start:
            return Position(_skip_done(self.steps, page, 0), on_path=True)
        for remembered in sorted(self.after.get(last_step, ()) if last_step is not None else ()):
            index = _skip_done(self.steps, page, remembered)
            if index == len(self.steps) or applicable(self.steps[index], page):
                return Position(index, on_path=True)
        return Position(page_position(self.steps, page), on_path=False)

    def remember(self, action: Action, index: int, element: str = "") -> None:
        """`action` (on `element`, in words) takes reference step `index`: a page it leads to stands at index + 1."""
        masked = Type(action.element_id, SECRET_MASK, action.press_enter) if isinstance(action, Type) else None
        for known in (action, masked):
            if known is not None:
                self.after.setdefault(signature(known), set()).add(index + 1)
                if element:
                    self.after.setdefault(signature(known, element), set()).add(index + 1)

    def action(self, index: int, page: Page) -> Action | None:
        """Reference step `index` as an action on this page; None when its target is not on it."""
        step = self.steps[index]
        if step.action == "goto":
            return Goto(goto_url(step, page))
        if step.action == "scroll":
            return Scroll("up" if step.text == "up" else "down")
        if step.action == "go_back":
            return GoBack()
        element = target(step, page)
        if step.action == "press":
            return Press(step.text or "Enter", element.id if element else None)
        if element is None:
            return None
        if step.action == "type":
            return Type(element.id, step.text or "", press_enter=step.enter)
        if step.action == "select_option":
            return SelectOption(element.id, (step.text or "",))
        if step.action == "hover":
            return Hover(element.id)
        return Click(element.id)
