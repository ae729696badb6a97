"""WebOperator's Alg. 2 as HeuristicClassifier: every branch, on small hand-built pages."""

from __future__ import annotations

import pytest

from branchwise.actions import (
    Action,
    Click,
    GoBack,
    Goto,
    Hover,
    Press,
    Scroll,
    SelectOption,
    Stop,
    Type,
)
from branchwise.core.classes import ActionClass, ActionClassifier
from branchwise.observation import PageView
from branchwise.search.heuristic import HeuristicClassifier, HeuristicConfig, normalize_label

from pageviews import page

SAFE, DESTRUCTIVE, TERMINATING = ActionClass.SAFE, ActionClass.DESTRUCTIVE, ActionClass.TERMINATING

CLASSIFIER = HeuristicClassifier()


def classify(action: Action, view: PageView | None) -> tuple[ActionClass, str]:
    result = CLASSIFIER.classify(action, view)
    assert len(result.reasons) == 1
    return result.action_class, result.reasons[0]


def test_implements_protocol() -> None:
    classifier: ActionClassifier = CLASSIFIER
    assert classifier.classify(Stop("done"), None).action_class is TERMINATING


def test_stop_is_terminating() -> None:
    assert classify(Stop("42"), None) == (TERMINATING, "ends the task with an answer")
    assert classify(Stop("N/A"), page())[0] is TERMINATING


@pytest.mark.parametrize("role", ["link", "checkbox", "tab", "option", "textbox", "radio", "StaticText"])
def test_click_on_non_button_is_safe(role: str) -> None:
    cls, reason = classify(Click(1), page((role, "Delete account")))
    assert cls is SAFE
    assert reason == f"clicks the {role} 'Delete account', which is not a button"


@pytest.mark.parametrize("label", [
    "Back", "Search", "Refresh", "Export", "Sort", "Filter", "Next", "Previous", "Close", "Expand", "Collapse",
    "Show more", "Apply filters", "Apply filter", "Go", "Next ›", "« Previous", "Sort by price", "Search products",
    "View cart", "Back to results", "Close ×", "SEARCH",
])
def test_navigational_button_is_safe(label: str) -> None:
    cls, reason = classify(Click(1), page(("button", label)))
    assert cls is SAFE
    assert reason == f"clicks the button '{label}', which only navigates or changes the view"


@pytest.mark.parametrize("label", [
    "Place order", "Cancel order", "Delete", "Save", "Submit", "Close issue", "Add to cart", "Searchlight", "Go live",
    "Cancel", "Unsubscribe", "Next day delivery and pay",
])
def test_other_button_is_destructive(label: str) -> None:
    cls, reason = classify(Click(1), page(("button", label)))
    assert cls is DESTRUCTIVE
    assert reason == f"clicks the button '{label}'"


def test_place_order_reason() -> None:
    assert classify(Click(2), page(("link", "Home"), ("button", "Place order"))) == (
        DESTRUCTIVE, "clicks the button 'Place order'")


def test_menuitem_counts_as_button() -> None:
    assert classify(Click(1), page(("menuitem", "Delete project")))[0] is DESTRUCTIVE
    assert classify(Click(1), page(("menuitem", "Sort by name")))[0] is SAFE
    buttons_only = HeuristicClassifier(HeuristicConfig(button_roles=("button",)))
    assert buttons_only.classify(Click(1), page(("menuitem", "Delete project"))).action_class is SAFE


def test_cancel_is_safe_only_inside_a_dialog() -> None:
    cls, reason = classify(Click(1), page(("button", "Cancel", {}, "dialog")))
    assert (cls, reason) == (SAFE, "clicks the button 'Cancel' in a dialog, which only closes it")
    assert classify(Click(1), page(("button", "Cancel", {}, "alertdialog")))[0] is SAFE
    assert classify(Click(1), page(("button", "Cancel")))[0] is DESTRUCTIVE
    assert classify(Click(1), page(("button", "Cancel order", {}, "dialog")))[0] is DESTRUCTIVE


@pytest.mark.parametrize("popup", ["menu", "dialog", "listbox", "True"])
def test_button_with_popup_is_safe(popup: str) -> None:
    cls, reason = classify(Click(1), page(("button", "Account", {"hasPopup": popup})))
    assert (cls, reason) == (SAFE, "clicks the button 'Account', which opens a popup")
    assert classify(Click(1), page(("button", "Account", {"haspopup": popup})))[0] is SAFE


def test_button_with_false_popup_is_not_a_popup() -> None:
    assert classify(Click(1), page(("button", "Account", {"hasPopup": "False"})))[0] is DESTRUCTIVE


def test_disabled_button_is_safe() -> None:
    cls, reason = classify(Click(1), page(("button", "Apply coupon", {"disabled": "True"})))
    assert (cls, reason) == (SAFE, "clicks the button 'Apply coupon', which is disabled")
    assert classify(Click(1), page(("button", "Apply coupon", {"disabled": "False"})))[0] is DESTRUCTIVE


def test_disclosure_button_is_safe() -> None:
    cls, reason = classify(Click(1), page(("button", "Shipping details", {"expanded": "False"})))
    assert (cls, reason) == (SAFE, "clicks the button 'Shipping details', which only expands or collapses a section")


def test_toggle_button_is_not_safe() -> None:
    # aria-pressed marks a toggle such as "Follow" or "Star", which is usually saved on the server.
    assert classify(Click(1), page(("button", "Follow", {"pressed": "False"})))[0] is DESTRUCTIVE


def test_missing_element_is_destructive() -> None:
    assert classify(Click(9), page(("button", "Search"))) == (DESTRUCTIVE, "cannot see the element")
    assert classify(Click(1), None) == (DESTRUCTIVE, "cannot see the element")


def test_type_with_enter_is_destructive() -> None:
    view = page(("textbox", "Search"))
    assert classify(Type(1, "shoes", True), view) == (
        DESTRUCTIVE, "presses Enter in a text field, which may submit a form")
    assert classify(Type(1, "shoes", False), view)[0] is SAFE


@pytest.mark.parametrize("keys", ["Enter", "Control+Enter", "Meta+Enter", "enter"])
def test_press_enter_is_destructive(keys: str) -> None:
    assert classify(Press(keys), None) == (DESTRUCTIVE, "presses Enter, which may submit a form")
    assert classify(Press(keys, 1), page(("textbox", "Comment")))[0] is DESTRUCTIVE


def test_press_other_keys_is_safe() -> None:
    assert classify(Press("Escape"), None)[0] is SAFE
    assert classify(Press("Control+a", 1), page(("textbox", "Comment")))[0] is SAFE


def test_press_space_on_a_button_is_judged_as_a_click() -> None:
    view = page(("button", "Place order"), ("button", "Search"), ("checkbox", "Remember me"))
    assert classify(Press("Space", 1), view) == (DESTRUCTIVE, "clicks the button 'Place order'")
    assert classify(Press("Space", 2), view)[0] is SAFE
    assert classify(Press("Space", 3), view)[0] is SAFE


@pytest.mark.parametrize("action", [
    Scroll("down"), Goto("https://shop.example/cart"), GoBack(), Hover(1), SelectOption(1, ("Blue",)),
])
def test_everything_else_is_safe(action: Action) -> None:
    cls, reason = classify(action, page(("combobox", "Colour")))
    assert cls is SAFE
    assert reason


def test_normalize_label() -> None:
    assert normalize_label("  Next  › ") == "next"
    assert normalize_label("Show more (12)") == "show more 12"
    assert normalize_label("Cancel-Order") == "cancel order"


def test_custom_word_lists() -> None:
    config = HeuristicConfig(safe_labels=("place order",), safe_prefixes=())
    classifier = HeuristicClassifier(config)
    assert classifier.classify(Click(1), page(("button", "Place order"))).action_class is SAFE
    assert classifier.classify(Click(1), page(("button", "Search products"))).action_class is DESTRUCTIVE
