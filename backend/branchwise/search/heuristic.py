"""WebOperator's pre-execution destructive-action heuristic (Alg. 2), with a reason for every verdict.

It runs before an action, from the page the action would run on, so it can only guess: the paper measured that ~37 %
of the actions it flags really changed server state. That bias is deliberate: a wrongly deferred safe action costs a
little search, a wrongly explored destructive one can place an order. Whenever the heuristic cannot tell (the element
is not on the page), it says destructive.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from ..actions import Action, Click, Press, Stop, Type
from ..core.classes import ActionClass, Classification
from ..observation import ElementInfo, PageView
from ..protocol import ElementFacts

log = logging.getLogger(__name__)

_NON_WORD = re.compile(r"[^\w]+")
_TRUE = ("True", "true")
_FALSE = ("", "False", "false")


@dataclass(frozen=True)
class HeuristicConfig:
    """Word lists and roles of the heuristic. Labels are compared after `normalize_label` (case-folded, punctuation and
    symbols such as "›" or "×" removed), and always as a whole label or a leading phrase, never as a substring:
    "Cancel" in a dialog is harmless, "Cancel order" is not."""

    # Roles that submit or trigger commands. The paper says "button"; "menuitem" is added because ARIA menu items are
    # commands (a "Delete" or "Archive" entry in a dropdown is as dangerous as a button), while links, tabs, checkboxes
    # and options keep the paper's "not a button -> safe".
    button_roles: tuple[str, ...] = ("button", "menuitem")
    # Whole labels of buttons that only navigate or change the view (the paper: back, search, refresh, export).
    safe_labels: tuple[str, ...] = (
        "back", "go back", "search", "refresh", "reload", "export", "sort", "filter", "filters", "apply filter",
        "apply filters", "clear filters", "reset filters", "next", "previous", "prev", "next page", "previous page",
        "first page", "last page", "close", "dismiss", "expand", "collapse", "expand all", "collapse all", "show more",
        "show less", "show all", "more", "less", "load more", "see more", "see all", "view all", "go", "menu",
        "open menu", "toggle navigation", "zoom in", "zoom out",
    )
    # Leading phrases of such labels ("Sort by price", "Search products", "View cart"); matched on word boundaries.
    safe_prefixes: tuple[str, ...] = (
        "sort by", "filter by", "search", "show", "hide", "view", "back to", "go to", "expand", "collapse", "export",
    )
    # Labels that only close a dialog when the button is inside one; outside a dialog "Cancel" may cancel an order.
    dialog_safe_labels: tuple[str, ...] = ("cancel", "no", "not now")
    dialog_roles: tuple[str, ...] = ("dialog", "alertdialog")
    # Property names of aria-haspopup as the observation keeps them (CDP's name first).
    popup_props: tuple[str, ...] = ("hasPopup", "haspopup")


def normalize_label(label: str) -> str:
    """A button label as the word lists see it: case-folded words separated by single spaces."""
    return " ".join(_NON_WORD.sub(" ", label.casefold()).split())


def _is_enter(keys: str) -> bool:
    """Whether a key combination ends in Enter (Enter, Control+Enter and Meta+Enter all submit forms somewhere)."""
    return keys.replace(" ", "").split("+")[-1].casefold() in ("enter", "return")


def _is_space(keys: str) -> bool:
    return keys in (" ", "Space") or keys.casefold() == "space"


class HeuristicClassifier:
    """The ActionClassifier used when no safety model is configured: Alg. 2 of WebOperator.

    Alg. 2 returns "not destructive" for unauthenticated users. Branchwise always acts in the user's own, logged-in
    browser, so the heuristic always runs as if authenticated.
    """

    def __init__(self, config: HeuristicConfig | None = None) -> None:
        self.config = config or HeuristicConfig()

    def classify(self, action: Action, page: PageView | None, facts: ElementFacts | None = None) -> Classification:
        """Alg. 2 reads only the page: `facts` is accepted for the ActionClassifier interface and ignored."""
        result = self._classify(action, page)
        log.debug("classify %s -> %s (%s)", action.to_text(), result.action_class.value, "; ".join(result.reasons))
        return result

    def _classify(self, action: Action, page: PageView | None) -> Classification:
        if isinstance(action, Stop):
            return Classification(ActionClass.TERMINATING, ("ends the task with an answer",))
        if isinstance(action, Click):
            return self._classify_click(action.element_id, page)
        if isinstance(action, Type):
            if action.press_enter:
                return _destructive("presses Enter in a text field, which may submit a form")
            return _safe("types into a field without submitting it")
        if isinstance(action, Press):
            if _is_enter(action.keys):
                return _destructive("presses Enter, which may submit a form")
            if action.element_id is not None and _is_space(action.keys):
                # Space on a focused button activates it: judge it as a click on that element.
                return self._classify_click(action.element_id, page)
            return _safe(f"presses {action.keys}, which does not submit anything")
        return _safe(f"'{action.to_text()}' only reads, navigates or changes the view")

    def _classify_click(self, element_id: int, page: PageView | None) -> Classification:
        element = page.elements.get(element_id) if page is not None else None
        if element is None:
            return _destructive("cannot see the element")
        config = self.config
        what = f"the {element.role or 'element'} '{element.name}'"
        if element.role not in config.button_roles:
            return _safe(f"clicks {what}, which is not a button")
        label = normalize_label(element.name)
        if self._navigational(label):
            return _safe(f"clicks {what}, which only navigates or changes the view")
        if label in config.dialog_safe_labels and self._in_dialog(element):
            return _safe(f"clicks {what} in a dialog, which only closes it")
        if any(element.props.get(name, "") not in _FALSE for name in config.popup_props):
            return _safe(f"clicks {what}, which opens a popup")
        if element.props.get("disabled") in _TRUE:
            return _safe(f"clicks {what}, which is disabled")
        if "expanded" in element.props:
            # aria-expanded marks a disclosure: the button shows or hides content on the page.
            return _safe(f"clicks {what}, which only expands or collapses a section")
        return _destructive(f"clicks {what}")

    def _navigational(self, label: str) -> bool:
        if label in self.config.safe_labels:
            return True
        return any(label == prefix or label.startswith(prefix + " ") for prefix in self.config.safe_prefixes)

    def _in_dialog(self, element: ElementInfo) -> bool:
        return any(step.role in self.config.dialog_roles for step in element.locator.ancestors)


def _safe(reason: str) -> Classification:
    return Classification(ActionClass.SAFE, (reason,))


def _destructive(reason: str) -> Classification:
    return Classification(ActionClass.DESTRUCTIVE, (reason,))
