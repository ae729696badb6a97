"""validate_action: what the model is told when an action cannot run on the page it was proposed on."""

from __future__ import annotations

import pytest

from branchwise.actions import (
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
from branchwise.agent.env import EnvView
from branchwise.observation import PageView
from branchwise.protocol import NavigationInfo, ScrollInfo, TabInfo
from branchwise.search.validate import ActionSpace, unavailable_actions, validate_action

from pageviews import page

# 1 search box, 2 button, 3 disabled button, 4 read-only field, 5 select with options 6, 8 and 9 (the last two in
# group 7), 10 a select whose options are not in the observation.
FORM = page(
    ("searchbox", "Search"),
    ("button", "Go"),
    ("button", "Checkout", {"disabled": "True"}),
    ("textbox", "Order number", {"readonly": "true"}),
    ("combobox", "Colour"),
    ("option", "Red"),
    ("group", "Dark"),
    ("option", "Navy Blue"),
    ("option", "Black"),
    ("combobox", "Size"),
    children={5: (6, 7), 7: (8, 9)},
)


def check(action: Action, view: PageView | None = FORM, tabs: int = 1, *, dialog_open: bool = False,
          can_scroll_up: bool = True, can_scroll_down: bool = True, can_go_back: bool = True,
          can_go_forward: bool = True) -> str | None:
    space = ActionSpace(tab_count=tabs, dialog_open=dialog_open, can_scroll_up=can_scroll_up,
                        can_scroll_down=can_scroll_down, can_go_back=can_go_back, can_go_forward=can_go_forward)
    refusal = validate_action(action, view, space)
    return None if refusal is None else refusal.reason


@pytest.mark.parametrize("action", [
    Click(2), Hover(2), Type(1, "shoes", True), Type(5, "Red", False), Press("Enter", 1), Press("Tab"),
    SelectOption(5, ("Red",)), SelectOption(10, ("XL",)), Scroll("down"), GoBack(), Stop("done"),
    Goto("https://shop.example/cart"), NewTab("http://localhost:8080/"), NewTab(),
])
def test_possible_actions_pass(action: Action) -> None:
    assert check(action) is None


def test_missing_element() -> None:
    assert check(Click(42)) == "there is no element [42] on this page; use an id from the observation"
    assert check(Type(42, "x", False)) == check(Click(42))


def test_disabled_element() -> None:
    assert check(Click(3)) == "[3] button 'Checkout' is disabled"
    assert check(Click(1), page(("button", "Checkout", {"disabled": "false"}))) is None


# 1 heading with 2 a link inside, 3 text with nothing to click inside, 4 a list of 5 links (6-10) around text.
ARTICLE = page(
    ("heading", "Featured products"),
    ("link", "Red Kettle"),
    ("StaticText", "Free shipping on orders over $50."),
    ("list", ""),
    ("listitem", ""),
    *[("link", f"Item {n}") for n in range(6, 11)],
    children={1: (2,), 4: (5,), 5: (6, 7, 8, 9, 10)},
    inert={1, 3, 4, 5},
)


def test_a_click_on_a_line_that_cannot_react_is_refused_with_what_to_click() -> None:
    assert check(Click(1), ARTICLE) == ("[1] heading 'Featured products' is not a link, button or other control, so a "
                                        "click on it does nothing; the controls inside it: [2] link 'Red Kettle'")
    assert check(Click(3), ARTICLE) == ("[3] StaticText 'Free shipping on orders over $50.' is not a link, button or "
                                        "other control, so a click on it does nothing; click a link, button or field "
                                        "instead")
    # The controls are found through containers that cannot react either, and only the first three are named.
    assert check(Click(4), ARTICLE) == ("[4] list is not a link, button or other control, so a click on it does "
                                        "nothing; the controls inside it: [6] link 'Item 6', [7] link 'Item 7', "
                                        "[8] link 'Item 8'")
    assert check(Click(2), ARTICLE) is None


def test_a_hover_or_key_on_a_line_that_cannot_react_is_allowed() -> None:
    """A hover opens menus made of CSS alone, which no listener shows; a key goes wherever the focus is."""
    assert check(Hover(1), ARTICLE) is None
    assert check(Press("PageDown", 3), ARTICLE) is None


def test_a_refusal_says_which_kind_of_mistake_it_is() -> None:
    """Counted per role in a run's report: an id the page lacks, a click on a line that cannot react, an answer with
    a number no page showed and the rest apart."""
    refused: list[tuple[Action, PageView | None, ActionSpace]] = [
        (Click(1), ARTICLE, ActionSpace()), (Click(42), ARTICLE, ActionSpace()),
        (Type(2, "x", False), ARTICLE, ActionSpace()), (Stop("$7"), None, ActionSpace(seen_numbers=frozenset())),
        (GoBack(), None, ActionSpace(can_go_back=False)), (Click(3), FORM, ActionSpace())]
    kinds = {action: refusal.kind for action, page, space in refused
             if (refusal := validate_action(action, page, space)) is not None}
    assert kinds == {Click(1): "inert_click", Click(42): "unknown_element", Type(2, "x", False): "invalid_action",
                     Stop("$7"): "ungrounded_answer", GoBack(): "invalid_action", Click(3): "invalid_action"}


def test_type_needs_a_text_field_and_is_told_where_to_type_instead() -> None:
    """The read-only field is not offered."""
    assert check(Type(2, "hello", False)) == ("[2] is a button, not a text field; type into a text field: "
                                              "[1] searchbox 'Search', [5] combobox 'Colour', [10] combobox 'Size'")
    many = page(("RootWebArea", "Shop"), *[("textbox", f"Field {n}") for n in range(1, 6)])
    assert check(Type(1, "x", False), many) == ("[1] is a RootWebArea, not a text field; type into a text field: "
                                                "[2] textbox 'Field 1', [3] textbox 'Field 2', [4] textbox 'Field 3' "
                                                "and 2 more")
    assert check(Type(1, "x", False), page(("RootWebArea", "Shop"), ("link", "Garden"))) == (
        "[1] is a RootWebArea, not a text field; this page shows no text field to type into")
    landmark = page(("link", "Home"), ("search", ""), ("searchbox", "Search products"), ("button", "Search"),
                    ("textbox", "Email"), children={2: (3, 4)})
    assert check(Type(2, "kettle", True), landmark) == (
        "[2] is a search, not a text field; the text field inside it: [3] searchbox 'Search products'")


def test_type_into_a_read_only_field() -> None:
    assert check(Type(4, "123", False)) == "[4] textbox 'Order number' is read-only"


def test_select_option_needs_a_list() -> None:
    assert check(SelectOption(1, ("Red",))) == "[1] is a searchbox, not a list of options"


def test_select_option_missing_lists_the_options_in_page_order() -> None:
    assert check(SelectOption(5, ("Red", "Green"))) == (
        "[5] has no option 'Green'; its options are 'Red', 'Navy Blue', 'Black'"
    )


def test_select_option_matches_case_and_space_insensitively() -> None:
    assert check(SelectOption(5, ("navy blue",))) is None
    assert check(SelectOption(5, (" BLACK ", "red"))) is None


def test_select_option_message_shows_at_most_twenty_options() -> None:
    options = [("option", f"Size {i}") for i in range(30)]
    view = page(("listbox", "Size"), *options, children={1: tuple(range(2, 32))})
    message = check(SelectOption(1, ("Size 99",)), view)
    assert message is not None
    assert message == "[1] has no option 'Size 99'; its options are " + ", ".join(f"'Size {i}'" for i in range(20))


@pytest.mark.parametrize(("index", "tabs"), [(3, 3), (-1, 3), (1, 1)])
def test_tab_focus_out_of_range(index: int, tabs: int) -> None:
    assert check(TabFocus(index), tabs=tabs) == f"there is no tab {index}; the open tabs are 0 to {tabs - 1}"


def test_tab_focus_in_range() -> None:
    assert check(TabFocus(2), tabs=3) is None
    assert check(TabFocus(0)) is None


def test_close_tab_needs_another_tab() -> None:
    assert check(CloseTab()) == "this is the only tab; close_tab would end the session"
    assert check(CloseTab(), tabs=2) is None


@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///etc/passwd", "shop.example/cart", "https://", "ftp://x.example"])
def test_goto_needs_an_http_address(url: str) -> None:
    assert check(Goto(url)) == f"{url} is not an http(s) address"
    assert check(NewTab(url)) == f"{url} is not an http(s) address"


def test_an_open_dialog_skips_element_checks() -> None:
    assert check(Click(42), dialog_open=True) is None
    assert check(Type(2, "hello", False), dialog_open=True) is None
    # Tab and address checks do not depend on the page, so they still apply.
    assert check(CloseTab(), dialog_open=True) == "this is the only tab; close_tab would end the session"


def test_no_page_skips_element_checks() -> None:
    assert check(Click(42), None) is None


def test_scroll_needs_somewhere_to_go() -> None:
    assert check(Scroll("down"), can_scroll_down=False) == ("the page is already scrolled to the bottom; everything "
                                                            "below is in the observation")
    assert check(Scroll("up"), can_scroll_up=False) == "the page is already at the top"
    assert check(Scroll("up"), can_scroll_down=False) is None
    # A dialog covers the page: its scroll position says nothing about what the model may do.
    assert check(Scroll("down"), dialog_open=True, can_scroll_down=False) is None


def test_history_moves_need_history() -> None:
    assert check(GoBack(), can_go_back=False) == "there is no previous page in this tab"
    assert check(GoForward(), can_go_forward=False) == "there is no next page in this tab to go forward to"
    assert check(GoForward()) is None


def view_with(scroll: ScrollInfo, navigation: NavigationInfo | None = None, tabs: int = 1) -> EnvView:
    return EnvView("", "https://shop.example/", "", 1, 0, page=FORM, scroll=scroll,
                   navigation=navigation or NavigationInfo(),
                   tabs=tuple(TabInfo(tab_id=i + 1, index=i) for i in range(tabs)))


def test_action_space_of_a_short_page_at_the_top_of_a_fresh_tab() -> None:
    space = ActionSpace.of(view_with(ScrollInfo(y=0, viewport_height=900, page_height=900),
                                     NavigationInfo(can_go_back=False, can_go_forward=False)))
    assert space == ActionSpace(tab_count=1, can_scroll_up=False, can_scroll_down=False, can_go_back=False,
                                can_go_forward=False, seen_numbers=frozenset())


def test_action_space_in_the_middle_of_a_long_page_with_history() -> None:
    space = ActionSpace.of(view_with(ScrollInfo(y=900, viewport_height=900, page_height=2700),
                                     NavigationInfo(can_go_back=True, can_go_forward=False), tabs=3))
    assert (space.tab_count, space.can_scroll_up, space.can_scroll_down) == (3, True, True)
    assert (space.can_go_back, space.can_go_forward) == (True, False)
    bottom = ActionSpace.of(view_with(ScrollInfo(y=1799.5, viewport_height=900, page_height=2700)))
    assert (bottom.can_scroll_up, bottom.can_scroll_down) == (True, False)


def test_unknown_scroll_and_history_forbid_nothing() -> None:
    space = ActionSpace.of(view_with(ScrollInfo()))
    assert space == ActionSpace(seen_numbers=frozenset())


def test_the_prompt_is_told_what_this_state_does_not_allow() -> None:
    """WebOperator's dynamic action space: what validation would refuse is named before the model proposes it."""
    assert unavailable_actions(FORM, ActionSpace(tab_count=2)) == []  # an unknown state allows everything
    first_page = ActionSpace(can_go_back=False, can_go_forward=False, can_scroll_up=False)
    assert unavailable_actions(page(("link", "Books")), first_page) == [
        "scroll [up] (the page is at its top)", "go_back (there is no previous page)",
        "go_forward (there is no next page)", "tab_focus and close_tab (only one tab is open)",
        "select_option (no list of options on this page)"]
    assert unavailable_actions(FORM, ActionSpace(can_scroll_up=False, can_scroll_down=False))[0] == (
        "scroll (the whole page is in view)")
    at_bottom = unavailable_actions(FORM, ActionSpace(can_scroll_down=False))
    assert at_bottom == ["scroll [down] (the page is at its bottom)", "tab_focus and close_tab (only one tab is open)"]
    # An open dialog may scroll and has its own controls: only history and tabs are named.
    assert unavailable_actions(page(("link", "x")), ActionSpace(dialog_open=True, can_scroll_down=False,
                                                               can_go_back=False)) == [
        "go_back (there is no previous page)", "tab_focus and close_tab (only one tab is open)"]
    # Every named kind is one validation refuses.
    for action in (Scroll("up"), GoBack(), GoForward(), TabFocus(1), CloseTab()):
        assert validate_action(action, FORM, first_page) is not None
