"""Snapshot comparison before each replayed step (WebOperator App. E) on real AX captures.

form.json and form_second.json are two captures of the same page with different DOM ids: they must match. Every
must-not-match case edits one thing in a copy of the captured AX nodes, so the test shows that exactly that change is
what gets detected.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from branchwise.actions import Click, GoBack, Hover, Press, Scroll, SelectOption, TabFocus, Type
from branchwise.observation import PageView, process
from branchwise.protocol import AXNode, AXProperty, AXValue, Observation
from branchwise.search.snapshot import (
    SnapshotMatch,
    compare_snapshot,
    outline,
    retarget,
    same_page,
    state_key,
)

FIXTURES = Path(__file__).parent / "fixtures" / "axtree"


def load(name: str) -> Observation:
    return Observation.model_validate_json((FIXTURES / f"{name}.json").read_bytes())


def eid(view: PageView, role: str, name: str, nth: int = 0) -> int:
    return [e.id for e in view.elements.values() if e.role == role and e.name == name][nth]


def ax_node(obs: Observation, role: str, name: str) -> AXNode:
    found = [n for f in obs.frames for n in f.nodes
             if n.role is not None and n.role.value == role and n.name is not None and n.name.value == name]
    assert len(found) == 1, f"expected one {role} {name!r}, found {len(found)}"
    return found[0]


def edited(name: str, edit: Callable[[Observation], None]) -> PageView:
    obs = load(name)
    edit(obs)
    return process(obs)


def rename(role: str, old: str, new: str) -> Callable[[Observation], None]:
    """Rename an element and the text inside it that spells its name, as a real label change would."""
    def edit(obs: Observation) -> None:
        by_id = {n.nodeId: n for f in obs.frames for n in f.nodes}
        stack = [ax_node(obs, role, old)]
        while stack:
            node = stack.pop()
            if node.name is not None and node.name.value == old:
                node.name = AXValue(type="computedString", value=new)
            stack.extend(by_id[c] for c in node.childIds if c in by_id)
    return edit


def set_prop(role: str, name: str, prop: str, value: object | None) -> Callable[[Observation], None]:
    def edit(obs: Observation) -> None:
        node = ax_node(obs, role, name)
        node.properties = [p for p in node.properties if p.name != prop]
        if value is not None:
            node.properties.append(AXProperty(name=prop, value=AXValue(type="boolean", value=value)))
    return edit


def set_value(role: str, name: str, value: str) -> Callable[[Observation], None]:
    def edit(obs: Observation) -> None:
        ax_node(obs, role, name).value = AXValue(type="string", value=value)
    return edit


def remove(role: str, name: str) -> Callable[[Observation], None]:
    def edit(obs: Observation) -> None:
        gone = ax_node(obs, role, name).nodeId
        for frame in obs.frames:
            for node in frame.nodes:
                node.childIds = [c for c in node.childIds if c != gone]
    return edit


def renumbered(name: str, new: Callable[[int], int]) -> PageView:
    """The same page with every DOM node id changed, as in a fresh tab."""
    obs = load(name)

    def key(k: str) -> str:
        return k if k.startswith("-") else str(new(int(k)))

    for frame in obs.frames:
        for node in frame.nodes:
            node.nodeId = key(node.nodeId)
            node.childIds = [key(c) for c in node.childIds]
            node.parentId = key(node.parentId) if node.parentId else None
            if node.backendDOMNodeId is not None:
                node.backendDOMNodeId = new(node.backendDOMNodeId)
    return process(obs)


@pytest.fixture(scope="module")
def form() -> PageView:
    return process(load("form"))


@pytest.fixture(scope="module")
def shop() -> PageView:
    return process(load("shop_home"))


def check(stored: PageView, role: str, name: str, live: PageView, nth: int = 0) -> tuple[SnapshotMatch, int | None]:
    return compare_snapshot(stored, eid(stored, role, name, nth), live)


# ---------------------------------------------------------------------------------------------------------------------
# Must match


def test_recapture_matches_every_element_with_renumbered_ids(form: PageView) -> None:
    second = process(load("form_second"))
    assert eid(form, "button", "Place order") != eid(second, "button", "Place order")
    for element in form.elements.values():
        match, live_id = compare_snapshot(form, element.id, second)
        assert match == SnapshotMatch(True), (element.role, element.name, match.reason)
        assert live_id is not None
        twin = second.elements[live_id]
        assert (twin.role, twin.name, twin.depth) == (element.role, element.name, element.depth)


def test_renumbered_shop_matches_each_of_the_repeated_buttons(shop: PageView) -> None:
    live = renumbered("shop_home", lambda old: 90_000 - 7 * old)
    for nth in range(3):
        match, live_id = check(shop, "button", "Add to Cart", live, nth)
        assert match.ok, match.reason
        assert live_id == eid(live, "button", "Add to Cart", nth)


def test_retarget_moves_targeted_actions_to_the_live_ids(form: PageView) -> None:
    second = process(load("form_second"))
    notes, country, order = (eid(form, "textbox", "Notes"), eid(form, "combobox", "Country"),
                             eid(form, "button", "Place order"))
    live_notes, live_country, live_order = (eid(second, "textbox", "Notes"), eid(second, "combobox", "Country"),
                                            eid(second, "button", "Place order"))
    assert retarget(Click(order), form, second) == Click(live_order)
    assert retarget(Hover(order), form, second) == Hover(live_order)
    assert retarget(Type(notes, "ring twice", True), form, second) == Type(live_notes, "ring twice", True)
    assert retarget(Press("Enter", notes), form, second) == Press("Enter", live_notes)
    assert retarget(SelectOption(country, ("Italy",)), form, second) == SelectOption(live_country, ("Italy",))
    for untargeted in (Scroll("down"), Press("Enter"), GoBack(), TabFocus(1)):
        assert retarget(untargeted, form, second) == untargeted


def test_a_change_far_from_the_pivotal_node_is_tolerated(shop: PageView) -> None:
    live = edited("shop_home", rename("link", "Privacy", "Privacy policy"))
    match, live_id = check(shop, "button", "Add to Cart", live, 1)
    assert match.ok, match.reason
    assert live_id == eid(live, "button", "Add to Cart", 1)


def test_a_neighbours_value_is_part_of_the_neighbourhood(form: PageView) -> None:
    """Text typed into another field of the form is state the replay must reproduce: the button would submit it."""
    live = edited("form", set_value("textbox", "Notes", "Ring twice"))
    match = check(form, "button", "Place order", live)[0]
    assert not match.ok
    assert match.reason.startswith("a neighbour changed under the form '': textbox 'Notes'")
    assert "value: 'Ring twice'" in match.reason


def test_a_neighbours_state_is_part_of_the_neighbourhood(form: PageView) -> None:
    live = edited("form", set_prop("button", "Apply coupon", "disabled", None))
    match = check(form, "button", "Place order", live)[0]
    assert not match.ok and "button 'Apply coupon'" in match.reason


def test_redacted_values_are_not_compared(form: PageView) -> None:
    live = edited("form", set_value("textbox", "Password", "another secret"))
    assert live.elements[eid(live, "textbox", "Password")].redacted
    assert check(form, "textbox", "Password", live)[0].ok


def test_focus_moving_is_not_a_change(form: PageView) -> None:
    def move_focus(obs: Observation) -> None:
        set_prop("textbox", "Card number", "focused", None)(obs)
        set_prop("textbox", "Email", "focused", True)(obs)

    live = edited("form", move_focus)
    assert check(form, "textbox", "Email", live)[0].ok
    assert compare_snapshot(form, None, live)[0].ok


def test_a_native_select_left_open_is_not_a_change(form: PageView) -> None:
    """A click opens Chromium's own popup for a <select> (a combobox with a `menu` popup) in a visible tab, never in
    the background tab a replay runs in: open or closed, it is the same page."""
    assert form.elements[eid(form, "combobox", "Country")].props.get("hasPopup") == "menu"
    live = edited("form", set_prop("combobox", "Country", "expanded", True))
    assert live.elements[eid(live, "combobox", "Country")].props.get("expanded") == "True"
    for role, name in (("combobox", "Country"), ("button", "Place order")):
        assert check(form, role, name, live)[0].ok
    assert compare_snapshot(form, None, live)[0].ok
    assert outline(form) == outline(live)
    assert "expanded: True" in live.text
    assert state_key(live.url, live.text) == state_key(form.url, form.text)


def test_a_custom_combobox_that_opens_is_a_change(form: PageView) -> None:
    """A scripted combobox (its popup a listbox) shows its options in the page: a replay must open it too."""
    def listbox_open(obs: Observation) -> None:
        node = ax_node(obs, "combobox", "Country")
        node.properties = [p for p in node.properties if p.name not in ("hasPopup", "expanded")]
        node.properties += [AXProperty(name="hasPopup", value=AXValue(type="token", value="listbox")),
                            AXProperty(name="expanded", value=AXValue(type="booleanOrUndefined", value=True))]

    def listbox(obs: Observation) -> None:
        listbox_open(obs)
        set_prop("combobox", "Country", "expanded", False)(obs)

    stored, live = edited("form", listbox), edited("form", listbox_open)
    match = check(stored, "combobox", "Country", live)[0]
    assert not match.ok and "expanded False -> True" in match.reason
    assert not compare_snapshot(stored, None, live)[0].ok


# ---------------------------------------------------------------------------------------------------------------------
# Must not match


def test_missing_pivotal_node(form: PageView) -> None:
    live = edited("form", remove("button", "Place order"))
    gone = SnapshotMatch(False, "the button 'Place order' is gone")
    assert check(form, "button", "Place order", live) == (gone, None)
    assert retarget(Click(eid(form, "button", "Place order")), form, live) is None


def test_label_with_other_digits_is_found_by_the_locator_but_rejected(shop: PageView) -> None:
    live = edited("shop_home", rename("link", "Cart (2)", "Cart (3)"))
    cart = eid(shop, "link", "Cart (2)")
    assert live.find(shop.elements[cart].locator) == eid(live, "link", "Cart (3)")
    assert compare_snapshot(shop, cart, live) == (SnapshotMatch(False, "label changed: 'Cart (2)' -> 'Cart (3)'"), None)


def test_relabelled_button_is_gone(form: PageView) -> None:
    live = edited("form", rename("button", "Place order", "Pay now"))
    match, live_id = check(form, "button", "Place order", live)
    assert (match.ok, live_id) == (False, None)
    assert "is gone" in match.reason


def test_changed_sibling_is_detected(shop: PageView) -> None:
    """The guard against WebOperator's broken-tuple bug: only a neighbour differs, and that must be enough."""
    live = edited("shop_home", rename("StaticText", "$31.50", "$35.00"))
    stored_button = shop.elements[eid(shop, "button", "Add to Cart", 1)]
    live_button = live.elements[eid(live, "button", "Add to Cart", 1)]
    assert (stored_button.name, stored_button.value, stored_button.props) == (
        live_button.name, live_button.value, live_button.props)
    match, live_id = check(shop, "button", "Add to Cart", live, 1)
    assert live_id is None
    assert match == SnapshotMatch(
        False, "a neighbour changed under the main '': StaticText '$31.50' -> StaticText '$35.00'")


def test_added_and_removed_siblings_are_detected(form: PageView) -> None:
    removed = edited("form", remove("button", "Apply coupon"))
    match = check(form, "button", "Place order", removed)[0]
    assert not match.ok
    assert match.reason == "a neighbour changed under the form '': button 'Apply coupon' disabled: True is gone"
    added = check(removed, "button", "Place order", form)[0]
    assert added.reason == "a neighbour changed under the form '': button 'Apply coupon' disabled: True appeared"


def test_changed_neighbour_of_an_outer_ancestor_is_detected(form: PageView) -> None:
    live = edited("form", rename("heading", "Checkout", "Review your order"))
    match = check(form, "radio", "Standard", live)[0]
    assert match == SnapshotMatch(False, "a neighbour changed under the RootWebArea 'Checkout': "
                                         "heading 'Checkout' -> heading 'Review your order'")


def test_changed_ancestor_is_detected(form: PageView) -> None:
    live = edited("form", rename("group", "Shipping", "Delivery"))
    match, live_id = check(form, "radio", "Standard", live)
    assert live_id is None
    assert match.reason == "an ancestor of the radio 'Standard' changed: group 'Shipping' -> group 'Delivery'"


def test_changed_landmark_ancestor_is_detected(shop: PageView) -> None:
    live = edited("shop_home", rename("navigation", "Main", "Primary"))
    assert live.find(shop.elements[eid(shop, "link", "Home")].locator) is not None, "the locator still finds it"
    match = check(shop, "link", "Home", live)[0]
    assert match.reason == "an ancestor of the link 'Home' changed: navigation 'Main' -> navigation 'Primary'"


def test_changed_descendant_is_detected(form: PageView) -> None:
    live = edited("form", rename("option", "Italy", "Spain"))
    match = check(form, "combobox", "Country", live)[0]
    assert match == SnapshotMatch(
        False, "a descendant of the combobox 'Country' changed: option 'Italy' -> option 'Spain'")


@pytest.mark.parametrize(("role", "name", "prop", "value", "reason"), [
    ("button", "Apply coupon", "disabled", None, "the button 'Apply coupon' changed state: disabled True -> False"),
    ("button", "Place order", "disabled", True, "the button 'Place order' changed state: disabled False -> True"),
    ("checkbox", "Send me news", "checked", False, "the checkbox 'Send me news' changed state: checked True -> False"),
    ("textbox", "Email", "readonly", True, "the textbox 'Email' changed state: readonly False -> True"),
])
def test_changed_state_is_detected(form: PageView, role: str, name: str, prop: str, value: object, reason: str) -> None:
    live = edited("form", set_prop(role, name, prop, value))
    assert check(form, role, name, live) == (SnapshotMatch(False, reason), None)


def test_changed_value_is_detected(form: PageView) -> None:
    live = edited("form", set_value("textbox", "Notes", "Ring twice"))
    match = check(form, "textbox", "Notes", live)[0]
    assert match == SnapshotMatch(False, "value of the textbox 'Notes' changed: 'Leave at the door' -> 'Ring twice'")


def test_stored_id_not_on_the_stored_page(form: PageView) -> None:
    match, live_id = compare_snapshot(form, 999_999, form)
    assert (match.ok, live_id) == (False, None)


# ---------------------------------------------------------------------------------------------------------------------
# Untargeted actions: the whole page


def test_page_level_match_across_recapture(form: PageView) -> None:
    second = process(load("form_second"))
    assert compare_snapshot(form, None, second) == (SnapshotMatch(True), None)
    assert same_page(form, second)
    assert outline(form) == outline(second)


def test_page_level_mismatch_on_changed_content(shop: PageView) -> None:
    live = edited("shop_home", rename("StaticText", "$31.50", "$35.00"))
    assert not same_page(shop, live)
    match, live_id = compare_snapshot(shop, None, live)
    assert live_id is None
    assert match == SnapshotMatch(False, "the page changed: StaticText '$31.50' -> StaticText '$35.00'")


def test_page_level_mismatch_on_changed_value(form: PageView) -> None:
    live = edited("form", set_value("textbox", "Notes", "Ring twice"))
    match = compare_snapshot(form, None, live)[0]
    assert not match.ok
    assert "'Leave at the door'" in match.reason and "'Ring twice'" in match.reason


def test_page_level_mismatch_on_removed_line(form: PageView) -> None:
    live = edited("form", remove("option", "Italy"))
    assert compare_snapshot(form, None, live)[0] == SnapshotMatch(
        False, "the page changed: option 'Italy' selected: False is gone")


def test_page_level_url(form: PageView) -> None:
    def moved(url: str) -> PageView:
        def edit(obs: Observation) -> None:
            obs.url = url
        return edited("form", edit)

    assert compare_snapshot(form, None, moved(form.url + "#shipping"))[0].ok
    match = compare_snapshot(form, None, moved(form.url + "?step=2"))[0]
    assert not match.ok
    assert match.reason.startswith("the URL changed:")


def test_the_state_key_ignores_ids_focus_and_the_fragment_but_not_content() -> None:
    text = ("Tab 0 (current): Shop\nURL: https://shop.example/#top\n\n[5] RootWebArea 'Shop'\n"
            "\t[7] searchbox 'Search' focused: True")
    again = "Tab 0 (current): Shop\nURL: https://shop.example/\n\n[91] RootWebArea 'Shop'\n\t[93] searchbox 'Search'"
    typed = again.replace("'Search'", "'Search' value: 'tent'")
    assert state_key("https://shop.example/#top", text) == state_key("https://shop.example/", again)
    assert state_key("https://shop.example/", typed) != state_key("https://shop.example/", again)
    assert state_key("https://shop.example/cart", again) != state_key("https://shop.example/", again)


def test_the_state_key_tells_an_open_menu_by_what_it_shows() -> None:
    """Only a combobox's own expanded flag is ignored: the options a scripted one shows when open, and a disclosure
    button's flag, still make another state."""
    closed = "URL: https://shop.example/\n\n[5] RootWebArea 'Shop'\n\t[6] combobox 'Sort by' expanded: False"
    key = state_key("https://shop.example/", closed)
    assert state_key("https://shop.example/", closed.replace("False", "True")) == key
    listed = closed.replace("False", "True") + "\n\t\t[9] listbox ''\n\t\t\t[10] option 'Price'"
    assert state_key("https://shop.example/", listed) != key
    button = closed.replace("combobox", "button")
    shown = state_key("https://shop.example/", button.replace("False", "True"))
    assert shown != state_key("https://shop.example/", button)
