"""How a policy prompt's history writes a step already taken (policy/steps.py): in words, with the element it acted
on and no element id anywhere, so a small model has no stale id to copy."""

from __future__ import annotations

import re

import pytest

from branchwise.actions import (
    ACTION_TYPES,
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
from branchwise.policy.steps import element_words, step_words, without_element_ids

FORUMS = element_words("link", "Forums")
SEARCH = element_words("searchbox", "Search posts")

WORDS: list[tuple[Action, str, str]] = [
    (Click(88), FORUMS, "clicked link 'Forums'"),
    (Hover(88), FORUMS, "hovered over link 'Forums'"),
    (Type(6, "nyc", True), SEARCH, "typed 'nyc' into searchbox 'Search posts' and pressed Enter"),
    (Type(6, "nyc", False), SEARCH, "typed 'nyc' into searchbox 'Search posts'"),
    (Type(9, "hunter2", False, secret=True), element_words("textbox", "Password"),
     "typed '••••••' into textbox 'Password'"),
    (Press("Enter", 6), SEARCH, "pressed Enter on searchbox 'Search posts'"),
    (Press("Control+a"), "", "pressed Control+a"),
    (SelectOption(30, ("Price: low to high",)), element_words("combobox", "Sort by"),
     "selected 'Price: low to high' in combobox 'Sort by'"),
    (Scroll("down"), "", "scrolled down"),
    (Goto("http://forum.test/f/nyc"), "", "went to http://forum.test/f/nyc"),
    (GoBack(), "", "went back"),
    (GoForward(), "", "went forward"),
    (NewTab(), "", "opened a new tab"),
    (NewTab("http://forum.test/"), "", "opened a new tab at http://forum.test/"),
    (TabFocus(1), "", "switched to tab 1"),
    (CloseTab(), "", "closed the tab"),
    (Stop("12"), "", "answered '12'"),
]


@pytest.mark.parametrize(("action", "element", "words"), WORDS, ids=[w for _, _, w in WORDS])
def test_a_step_reads_as_what_was_done_with_no_id(action: Action, element: str, words: str) -> None:
    assert step_words(action, element) == words
    assert not re.search(r"\[\d+\]|\b(88|6|9|30)\b", words.replace("tab 1", ""))


def test_every_kind_of_action_has_words() -> None:
    assert {type(action) for action, _, _ in WORDS} == set(ACTION_TYPES)


def test_an_element_whose_name_is_unknown_or_has_quotes_still_reads() -> None:
    assert step_words(Click(3)) == "clicked an element"
    assert element_words("button", "") == "a button"
    assert step_words(Click(3), element_words("link", "Bob's page")) == 'clicked link "Bob\'s page"'


def test_the_reasoning_of_a_step_loses_its_ids_and_keeps_its_words() -> None:
    assert without_element_ids("I will click [1454] 'Sports', then [7].") == "I will click 'Sports', then."
    assert without_element_ids("The price is $12.99 [USD]") == "The price is $12.99 [USD]"
