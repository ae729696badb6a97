"""Validation before execution (WebOperator): catch an action the page cannot take and tell the model why.

Checked against the observation the action was proposed on, without touching the browser: the element exists and is
enabled, a text field is editable, an option exists under the select, tab operations have tabs to work on.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..actions import (
    Action,
    Click,
    CloseTab,
    Goto,
    Hover,
    NewTab,
    Press,
    SelectOption,
    TabFocus,
    Type,
)
from ..observation import PageView
from ..observation.view import ElementInfo

TEXT_ROLES = frozenset({"textbox", "searchbox", "combobox", "textarea", "spinbutton", "TextField"})
SELECT_ROLES = frozenset({"combobox", "listbox", "MenuListPopup"})
OPTION_ROLES = frozenset({"option", "MenuListOption", "menuitem", "menuitemradio"})


def _flag(element: ElementInfo, name: str) -> bool:
    return element.props.get(name, "").lower() == "true"


def _options(page: PageView, element: ElementInfo) -> list[str]:
    """The option names under a select, in page order (the model is shown the first few)."""
    found: list[str] = []
    stack = list(reversed(element.children))
    while stack:
        child = page.elements.get(stack.pop())
        if child is None:
            continue
        if child.role in OPTION_ROLES:
            found.append(child.name)
        stack.extend(reversed(child.children))
    return found


def validate_action(action: Action, page: PageView | None, tab_count: int, *, dialog_open: bool = False) -> str | None:
    """None when the action can run here, else the reason, phrased for the model."""
    match action:
        case TabFocus(index=index):
            if not 0 <= index < tab_count:
                return f"there is no tab {index}; the open tabs are 0 to {tab_count - 1}"
            return None
        case CloseTab():
            return None if tab_count > 1 else "this is the only tab; close_tab would end the session"
        case Goto(url=url) | NewTab(url=url) if url:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                return f"{url} is not an http(s) address"
            return None
    element_id = action.element_id
    if element_id is None or dialog_open or page is None:
        return None
    element = page.elements.get(element_id)
    if element is None:
        return f"there is no element [{element_id}] on this page; use an id from the observation"
    if _flag(element, "disabled"):
        return f"[{element_id}] {element.role} '{element.name}' is disabled"
    match action:
        case Type():
            if element.role not in TEXT_ROLES:
                return f"[{element_id}] is a {element.role}, not a text field; type into a textbox"
            if _flag(element, "readonly"):
                return f"[{element_id}] {element.role} '{element.name}' is read-only"
        case SelectOption(values=values):
            if element.role not in SELECT_ROLES:
                return f"[{element_id}] is a {element.role}, not a list of options"
            options = _options(page, element)
            if options:
                lowered = {o.strip().lower() for o in options}
                missing = [v for v in values if v.strip().lower() not in lowered]
                if missing:
                    return (f"[{element_id}] has no option {missing[0]!r}; its options are "
                            + ", ".join(repr(o) for o in options[:20]))
        case Click() | Hover() | Press():
            pass
    return None
