"""Validation before execution (WebOperator): catch an action the page cannot take and tell the model why.

Checked against the observation the action was proposed on, without touching the browser: the element exists and is
enabled, a clicked line can react to a click (observation/prune.py), a text field is editable, an option exists under
the select, tab operations have tabs to work on, a scroll has somewhere to go, go_back/go_forward have history to move
through, a goto/new_tab address is on a site the user's lists allow (safety/sites.py), a stop's answer gives only
numbers a page on the way showed (grounding.py). Whether a `goto` address answers is checked separately, in a
throw-away tab (urlcheck.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import islice
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..actions import (
    Action,
    Click,
    CloseTab,
    GoBack,
    GoForward,
    Goto,
    Hover,
    NewTab,
    Press,
    Scroll,
    SelectOption,
    Stop,
    TabFocus,
    Type,
)
from ..core.mistakes import MistakeKind
from ..observation import PageView
from ..observation.view import ElementInfo
from ..safety.sites import SiteRules
from .grounding import numbers_in, unseen_numbers

if TYPE_CHECKING:
    from ..agent.env import EnvView

# Less than this many pixels left to scroll counts as none (rounding, sticky footers).
SCROLL_SLACK = 2.0

TEXT_ROLES = frozenset({"textbox", "searchbox", "combobox", "textarea", "spinbutton", "TextField"})
SELECT_ROLES = frozenset({"combobox", "listbox", "MenuListPopup"})
OPTION_ROLES = frozenset({"option", "MenuListOption", "menuitem", "menuitemradio"})
# How many of a page's text fields a refused `type` names.
MAX_NAMED_FIELDS = 3


@dataclass(frozen=True)
class ActionSpace:
    """What a state allows beyond its elements. The defaults allow everything: an unknown state forbids nothing."""

    tab_count: int = 1
    dialog_open: bool = False
    can_scroll_up: bool = True
    can_scroll_down: bool = True
    can_go_back: bool = True
    can_go_forward: bool = True
    # The user's site lists: a goto or new_tab to a refused site is refused here, with the reason for the model.
    sites: SiteRules = SiteRules()
    # The numbers the pages on the way here showed, this one's included; None (unknown): any answer is allowed.
    seen_numbers: frozenset[str] | None = None

    @classmethod
    def of(cls, view: EnvView, seen_before: frozenset[str] | None = None) -> ActionSpace:
        """The state of `view`, reached from pages that showed `seen_before`."""
        scroll, navigation = view.scroll, view.navigation
        # A page that reported no size (dialog open, capture failed) is not known to be unscrollable.
        measured = scroll.page_height > 0 and scroll.viewport_height > 0
        below = scroll.page_height - scroll.viewport_height - scroll.y
        return cls(
            tab_count=max(1, len(view.tabs)),
            dialog_open=view.dialog is not None,
            can_scroll_up=not measured or scroll.y > SCROLL_SLACK,
            can_scroll_down=not measured or below > SCROLL_SLACK,
            can_go_back=navigation.can_go_back is not False,
            can_go_forward=navigation.can_go_forward is not False,
            sites=view.sites,
            seen_numbers=(seen_before or frozenset()) | numbers_in(view.text),
        )

    def with_seen(self, text: str) -> ActionSpace:
        """This state, with the text's numbers taken as seen: the task's own, or an answer's the model gave again
        after being told no page showed them (a count it made itself)."""
        if self.seen_numbers is None:
            return self
        return replace(self, seen_numbers=self.seen_numbers | numbers_in(text))


def _flag(element: ElementInfo, name: str) -> bool:
    return element.props.get(name, "").lower() == "true"


def _options(page: PageView, element: ElementInfo) -> list[str]:
    """The option names under a select, in page order (the model is shown the first few)."""
    return [child.name for child in page.descendants(element) if child.role in OPTION_ROLES]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an action cannot run where it was proposed: the kind of mistake (counted per role) and the reason, as the
    model is told it."""

    kind: MistakeKind
    reason: str

    def __str__(self) -> str:
        return self.reason


def _invalid(reason: str) -> Refusal:
    return Refusal("invalid_action", reason)


def line_of(element: ElementInfo) -> str:
    """An element as the observation shows it: `[42] link 'Projects'`."""
    return f"[{element.id}] {element.role}" + (f" '{element.name}'" if element.name else "")


def is_text_field(element: ElementInfo) -> bool:
    """A field `type` can fill: a text role, neither disabled nor read-only."""
    return element.role in TEXT_ROLES and not _flag(element, "disabled") and not _flag(element, "readonly")


def text_fields_inside(page: PageView, element: ElementInfo) -> list[ElementInfo]:
    return [e for e in page.descendants(element) if is_text_field(e)]


def _text_fields(page: PageView, target: ElementInfo) -> str:
    """Where to type instead, named, the fields inside `target` first. Told only "type into a textbox", a real 1.5B
    model's greedy runs stopped on three refused actions, the last typing into the `search` landmark around a search
    box (3004 and 1006 in the bench's runs), and on the demo's task it typed into the page's root, then gave up."""
    inside = text_fields_inside(page, target)
    if inside:
        return (f"the text field{'s' if len(inside) > 1 else ''} inside it: "
                + ", ".join(line_of(e) for e in inside[:MAX_NAMED_FIELDS]))
    fields = [line_of(e) for e in page.elements.values() if is_text_field(e)]
    if not fields:
        return "this page shows no text field to type into"
    shown = fields[:MAX_NAMED_FIELDS]
    more = f" and {len(fields) - len(shown)} more" if len(fields) > len(shown) else ""
    return "type into a text field: " + ", ".join(shown) + more


def controls_inside(page: PageView, element: ElementInfo, limit: int = 3) -> list[ElementInfo]:
    """The first lines under `element` a click acts on, outermost only (a link, not the text inside it: what lies in a
    line that reacts reacts too, and `element` itself does not)."""
    outermost = (child for child in page.descendants(element)
                 if child.reacts and child.parent is not None and not page.elements[child.parent].reacts)
    return list(islice(outermost, limit))


def _inert_click(page: PageView, element: ElementInfo) -> str:
    """Why a click on a line that cannot react is refused, and what to click instead."""
    inside = controls_inside(page, element)
    instead = ("the controls inside it: " + ", ".join(line_of(c) for c in inside) if inside
               else "click a link, button or field instead")
    return f"{line_of(element)} is not a link, button or other control, so a click on it does nothing; {instead}"


def unavailable_actions(page: PageView | None, space: ActionSpace) -> list[str]:
    """The kinds of action this state does not allow, each with why: WebOperator's dynamic action space, shown in the
    policy prompt so a model is not left to learn from refusals what `validate_action` would refuse. An unknown
    state (the defaults) allows everything."""
    unavailable = []
    if not space.dialog_open:
        if not space.can_scroll_up and not space.can_scroll_down:
            unavailable.append("scroll (the whole page is in view)")
        elif not space.can_scroll_down:
            unavailable.append("scroll [down] (the page is at its bottom)")
        elif not space.can_scroll_up:
            unavailable.append("scroll [up] (the page is at its top)")
    if not space.can_go_back:
        unavailable.append("go_back (there is no previous page)")
    if not space.can_go_forward:
        unavailable.append("go_forward (there is no next page)")
    if space.tab_count == 1:
        unavailable.append("tab_focus and close_tab (only one tab is open)")
    if page is not None and not space.dialog_open and not any(e.role in SELECT_ROLES for e in page.elements.values()):
        unavailable.append("select_option (no list of options on this page)")
    return unavailable


def validate_action(action: Action, page: PageView | None, space: ActionSpace = ActionSpace()) -> Refusal | None:
    """None when the action can run here, else the refusal: what kind of mistake it is and why, phrased for the
    model."""
    tab_count = space.tab_count
    match action:
        case TabFocus(index=index):
            if not 0 <= index < tab_count:
                return _invalid(f"there is no tab {index}; the open tabs are 0 to {tab_count - 1}")
            return None
        case CloseTab():
            return None if tab_count > 1 else _invalid("this is the only tab; close_tab would end the session")
        case Goto(url=url) | NewTab(url=url) if url:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                return _invalid(f"{url} is not an http(s) address")
            blocked = space.sites.refusal(url)
            return None if blocked is None else _invalid(blocked)
        case Scroll(direction="down") if not space.can_scroll_down and not space.dialog_open:
            return _invalid("the page is already scrolled to the bottom; everything below is in the observation")
        case Scroll(direction="up") if not space.can_scroll_up and not space.dialog_open:
            return _invalid("the page is already at the top")
        case GoBack() if not space.can_go_back:
            return _invalid("there is no previous page in this tab")
        case GoForward() if not space.can_go_forward:
            return _invalid("there is no next page in this tab to go forward to")
        case Stop(answer=answer) if space.seen_numbers is not None:
            unseen = unseen_numbers(answer, space.seen_numbers)
            if unseen:
                return Refusal("ungrounded_answer", (
                    f"no page on the way here shows {', '.join(unseen)}; answer only with what the pages show, or "
                    "N/A if the task cannot be done (a number you worked out from a page, say by counting its "
                    "rows: give the same answer again)"))
            return None
    element_id = action.element_id
    if element_id is None or space.dialog_open or page is None:
        return None
    element = page.elements.get(element_id)
    if element is None:
        return Refusal("unknown_element", f"there is no element [{element_id}] on this page; use an id from the "
                                          "observation")
    if _flag(element, "disabled"):
        return _invalid(f"[{element_id}] {element.role} '{element.name}' is disabled")
    match action:
        case Type():
            if element.role not in TEXT_ROLES:
                return _invalid(f"[{element_id}] is a {element.role}, not a text field; {_text_fields(page, element)}")
            if _flag(element, "readonly"):
                return _invalid(f"[{element_id}] {element.role} '{element.name}' is read-only")
        case SelectOption(values=values):
            if element.role not in SELECT_ROLES:
                return _invalid(f"[{element_id}] is a {element.role}, not a list of options")
            options = _options(page, element)
            if options:
                lowered = {o.strip().lower() for o in options}
                missing = [v for v in values if v.strip().lower() not in lowered]
                if missing:
                    return _invalid(f"[{element_id}] has no option {missing[0]!r}; its options are "
                                    + ", ".join(repr(o) for o in options[:20]))
        case Click() if not element.reacts:
            return Refusal("inert_click", _inert_click(page, element))
        case Click() | Hover() | Press():
            pass
    return None

