"""Observation processing on real captures (tests/fixtures/axtree, made by scripts/capture_axtree.py).

Expected lines take their ids from the raw fixture (document-order walk of the CDP nodes, written here independently
of the code under test), so the tests stay valid when the fixtures are captured again.
"""

from __future__ import annotations

import gzip
import re
import time
from functools import partial
from pathlib import Path

import pytest

from branchwise.observation import ObservationConfig, PageView, process
from branchwise.observation.coverage import unreached_clickables
from branchwise.observation.prune import repeats_name
from branchwise.observation.redact import is_sensitive_field, looks_like_card_number, luhn_valid
from branchwise.observation.render import quote
from branchwise.observation.tree import RawNode
from branchwise.protocol import AXNode, AXProperty, AXValue, DialogInfo, ElementRef, Observation, TabInfo

FIXTURES = Path(__file__).parent / "fixtures" / "axtree"


def load(name: str) -> Observation:
    path = FIXTURES / f"{name}.json"
    if path.exists():
        return Observation.model_validate_json(path.read_bytes())
    return Observation.model_validate_json(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))


def document_order(observation: Observation, frame_index: int = 0) -> list[AXNode]:
    frame = observation.frames[frame_index]
    by_id = {node.nodeId: node for node in frame.nodes}
    out: list[AXNode] = []
    stack = [frame.nodes[0]]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(by_id[child] for child in reversed(node.childIds) if child in by_id)
    return out


def raw_id(observation: Observation, role: str, name: str, nth: int = 0, frame_index: int = 0) -> int:
    """backendDOMNodeId of the nth node with this role and name, straight from the capture."""
    found = [
        node.backendDOMNodeId for node in document_order(observation, frame_index)
        if not node.ignored and node.role and node.role.value == role and node.name and node.name.value == name
    ]
    assert len(found) > nth, f"fixture has no {role} {name!r} #{nth}"
    backend_id = found[nth]
    assert backend_id is not None, f"the fixture's {role} {name!r} #{nth} has no backendDOMNodeId"
    return backend_id


def body(text: str) -> list[str]:
    """The tree lines, without the tab and URL header."""
    return text.split("\n\n", 1)[1].split("\n")


# ---------------------------------------------------------------------------------------------------------------------
# Whole pages


def test_shop_home_full_text() -> None:
    obs = load("shop_home")
    i = partial(raw_id, obs)
    mug = i("link", "Kid's Mug")
    expected = "\n".join([
        "Tab 0 (current): Acme Shop",
        f"URL: {obs.url}",
        "",
        f"[{i('RootWebArea', 'Acme Shop')}] RootWebArea 'Acme Shop'",
        f"\t[{i('navigation', 'Main')}] navigation 'Main'",
        f"\t\t[{i('link', 'Home')}] link 'Home'",
        f"\t\t[{i('link', 'Deals')}] link 'Deals'",
        f"\t\t[{i('link', 'Cart (2)')}] link 'Cart (2)'",
        f"\t\t[{i('link', 'My Account')}] link 'My Account'",
        f"\t[{i('search', '')}] search ''",
        f"\t\t[{i('searchbox', 'Search')}] searchbox 'Search'",
        f"\t\t[{i('button', 'Go')}] button 'Go'",
        f"\t[{i('main', '')}] main ''",
        f"\t\t[{i('heading', 'Featured products')}] heading 'Featured products'",
        f"\t\t[{i('link', 'Red Kettle')}] link 'Red Kettle'",
        f"\t\t[{i('StaticText', '$24.99')}] StaticText '$24.99'",
        f"\t\t[{i('button', 'Add to Cart', 0)}] button 'Add to Cart'",
        f"\t\t[{i('link', 'Blue Teapot')}] link 'Blue Teapot'",
        f"\t\t[{i('StaticText', '$31.50')}] StaticText '$31.50'",
        f"\t\t[{i('button', 'Add to Cart', 1)}] button 'Add to Cart'",
        f"\t\t[{mug}] link \"Kid's Mug\"",
        f"\t\t[{i('StaticText', '$8.00')}] StaticText '$8.00'",
        f"\t\t[{i('button', 'Add to Cart', 2)}] button 'Add to Cart'",
        f"\t\t[{i('StaticText', 'Free shipping on orders over $50.')}] StaticText 'Free shipping on orders over $50.'",
        f"\t[{i('contentinfo', '')}] contentinfo ''",
        f"\t\t[{i('link', 'Privacy')}] link 'Privacy'",
        f"\t\t[{i('link', 'Contact us')}] link 'Contact us'",
        f"\t\t[{i('StaticText', '© 2024 Acme')}] StaticText '© 2024 Acme'",
    ])
    view = process(obs, ObservationConfig())
    assert view.text == expected
    assert view.url == obs.url
    assert view.node_count_raw == sum(len(frame.nodes) for frame in obs.frames)


def test_hidden_elements_are_absent() -> None:
    obs = load("hidden")
    view = process(obs)
    i = partial(raw_id, obs)
    assert body(view.text) == [
        f"[{i('RootWebArea', 'Hidden things')}] RootWebArea 'Hidden things'",
        f"\t[{i('heading', 'Visible heading')}] heading 'Visible heading'",
        f"\t[{i('button', 'Visible button')}] button 'Visible button'",
        f"\t[{i('StaticText', 'Visible text')}] StaticText 'Visible text'",
    ]
    # two hidden iframes (display:none, aria-hidden) hold a textbox 'Message' and a button 'Send'
    assert len(obs.frames) == 3
    for hidden in ("Display none", "Invisible link", "Aria hidden", "Hidden attribute", "frame", "Message", "Send"):
        assert hidden not in view.text
        assert all(hidden not in element.name for element in view.elements.values())


def test_text_is_dropped_only_where_its_container_already_says_it() -> None:
    obs = load("repeated_text")
    view = process(obs)
    i = partial(raw_id, obs)
    assert body(view.text) == [
        f"[{i('RootWebArea', 'Orders')}] RootWebArea 'Orders'",
        # the heading's own text is in its name
        f"\t[{i('heading', 'Orders')}] heading 'Orders'",
        # the same status twice in a row is two facts of the page: both stay
        f"\t[{i('StaticText', 'Shipped', 0)}] StaticText 'Shipped'",
        f"\t[{i('StaticText', 'Shipped', 1)}] StaticText 'Shipped'",
        f"\t[{i('StaticText', 'Pending')}] StaticText 'Pending'",
        f"\t[{i('StaticText', 'Paid')}] StaticText 'Paid'",
        f"\t[{i('StaticText', 'Refunded')}] StaticText 'Refunded'",
        f"\t[{i('StaticText', 'Shipped', 2)}] StaticText 'Shipped'",
        # the link's and the button's texts are their names
        f"\t[{i('link', 'Order 1001')}] link 'Order 1001'",
        f"\t[{i('button', 'Details')}] button 'Details'",
    ]


# Cases that WebArena's rule (drop a text found in any of the 3 lines above) got wrong on third-party pages.


@pytest.fixture(scope="module")
def pruning() -> tuple[Observation, list[str]]:
    obs = load("pruning")
    return obs, body(process(obs).text)


def test_a_clickable_word_quoted_by_the_instruction_above_it_stays(pruning: tuple[Observation, list[str]]) -> None:
    obs, lines = pruning
    quoted = f"\t[{raw_id(obs, 'StaticText', 'Neque,')}] StaticText 'Neque,'"
    assert lines[1] == "\t[{}] StaticText 'Click on the link \"Neque,\".'".format(
        raw_id(obs, "StaticText", 'Click on the link "Neque,".'))
    assert lines[2] == quoted


def test_an_instructions_first_word_found_in_the_page_title_stays(pruning: tuple[Observation, list[str]]) -> None:
    obs, lines = pruning
    first = lines.index(f"\t[{raw_id(obs, 'StaticText', 'Click')}] StaticText 'Click'")
    assert lines[first + 1].endswith("StaticText 'the button below.'")


def test_characters_typed_one_text_node_each_all_stay(pruning: tuple[Observation, list[str]]) -> None:
    _, lines = pruning
    console = next(k for k, line in enumerate(lines) if "generic 'Console'" in line)
    typed = [re.sub(r"^\s*\[\d+\] StaticText ", "", line) for line in lines[console + 1:console + 6]]
    assert typed == ["'l'", "'s'", "'-'", "'l'", "'a'"]  # "ls -la": only the blank between is not a line


def test_a_nameless_focusable_box_is_kept_and_a_links_own_label_is_not_repeated(
        pruning: tuple[Observation, list[str]]) -> None:
    _, lines = pruning
    order = next(k for k, line in enumerate(lines) if line.endswith("link 'Order 1001'"))
    assert lines[order + 1].endswith("dialog 'Delete item'")  # no 'Order 1001' text line in between
    assert re.fullmatch(r"\t\[\d+\] generic ''", lines[-1])  # tabindex=0, a click handler and no text
    # A focusable box inside a link is kept, and the link's text inside it is still not repeated.
    assert lines[-3].endswith("link 'Order 1002'") and re.fullmatch(r"\t\t\[\d+\] generic ''", lines[-2])


def test_a_clickable_word_in_a_dialog_named_by_its_heading_stays(pruning: tuple[Observation, list[str]]) -> None:
    obs, lines = pruning
    dialog = next(k for k, line in enumerate(lines) if line.endswith("dialog 'Delete item'"))
    assert lines[dialog + 1].endswith("heading 'Delete item'")
    assert lines[dialog + 2] == f"\t\t[{raw_id(obs, 'StaticText', 'Delete')}] StaticText 'Delete'"


def test_a_box_with_a_click_listener_and_nothing_inside_gets_a_line(pruning: tuple[Observation, list[str]]) -> None:
    obs, lines = pruning
    # The red square (an onclick and no text) is its own line; the row's listener is reached through its text.
    icons = [line for line in lines if line.endswith("clickable: True")]
    assert len(icons) == 1 and re.fullmatch(r"\t\[\d+\] generic '' clickable: True", icons[0]), icons
    assert f"\t[{raw_id(obs, 'StaticText', 'Row one')}] StaticText 'Row one'" in lines
    # Without what the DOM says about listeners, the square would be folded away like any empty box.
    blind = obs.model_copy(update={"frames": [f.model_copy(update={"clickable_node_ids": []}) for f in obs.frames]})
    assert not any("clickable" in line for line in process(blind).text.splitlines())


def reacting(view: PageView) -> dict[tuple[str, str], bool]:
    return {(e.role, e.name): e.reacts for e in view.elements.values()}


def test_a_click_reacts_on_controls_and_what_lies_in_them_only() -> None:
    obs = load("shop_home")
    lines = reacting(process(obs))
    for control in [("link", "Red Kettle"), ("button", "Add to Cart"), ("searchbox", "Search"), ("button", "Go")]:
        assert lines[control], control
    for inert in [("heading", "Featured products"), ("StaticText", "$24.99"), ("navigation", "Main"),
                  ("StaticText", "Free shipping on orders over $50."), ("RootWebArea", "Acme Shop"), ("main", "")]:
        assert not lines[inert], inert
    # A listener on the document (analytics, delegation to the page's links) does not make its headings react.
    root = raw_id(obs, "RootWebArea", "Acme Shop")
    listened = obs.model_copy(update={"frames": [obs.frames[0].model_copy(
        update={"clickable_node_ids": [root, *obs.frames[0].clickable_node_ids]})]})
    assert reacting(process(listened)) == lines
    # Nor does a skip link's target: `<main tabindex="-1">` takes the focus, and a click on it does nothing else.
    main = next(n for n in obs.frames[0].nodes if n.role is not None and n.role.value == "main")
    focusable = main.model_copy(update={"properties": [*main.properties, AXProperty(
        name="focusable", value=AXValue(type="booleanOrUndefined", value=True))]})
    skip_target = obs.model_copy(update={"frames": [obs.frames[0].model_copy(update={"nodes": [
        focusable if n is main else n for n in obs.frames[0].nodes]})]})
    assert reacting(process(skip_target)) == lines
    # Without what the DOM says about listeners, nothing is known not to react.
    blind = obs.model_copy(update={"frames": [f.model_copy(update={"clickable_node_ids": []}) for f in obs.frames]})
    assert all(reacting(process(blind)).values())


def test_text_inside_an_element_with_a_click_listener_reacts(pruning: tuple[Observation, list[str]]) -> None:
    """A row's listener (addEventListener, no role, no line of its own) and an onclick span reach their text; the
    instruction above them does not."""
    lines = reacting(process(pruning[0]))
    assert lines[("StaticText", "Row one")] and lines[("StaticText", "details")] and lines[("StaticText", "Neque,")]
    assert not lines[("StaticText", 'Click on the link "Neque,".')]
    assert not lines[("heading", "Delete item")] and lines[("StaticText", "Delete")]


@pytest.mark.parametrize("name", sorted(p.name.split(".")[0] for p in FIXTURES.glob("*.json*")))
def test_every_element_the_dom_marks_clickable_can_be_acted_on(name: str) -> None:
    obs = load(name)
    assert unreached_clickables(obs, process(obs)) == []


def test_the_fixtures_say_what_is_clickable() -> None:
    """The check above is not vacuous: every fixture was captured with the DOM's clickable elements."""
    counts = {p.name.split(".")[0]: sum(len(f.clickable_node_ids) for f in load(p.name.split(".")[0]).frames)
              for p in FIXTURES.glob("*.json*")}
    assert all(counts.values()), counts


def test_repeats_name_matches_whole_words_only() -> None:
    assert repeats_name("Order 1001", "Order 1001")
    assert repeats_name("Order", "Order 1001")
    assert repeats_name("Neque,", "Click on Neque, now")
    assert repeats_name("$34.50", "US$34.50")  # no word boundary asked for before "$"
    assert repeats_name("(3)", "Cart(3)")
    assert not repeats_name("l", "Console")
    assert not repeats_name("Cafe", "Cafe\u0301 menu")  # the e carries an accent there
    assert not repeats_name("  ", "Console")


def test_shadow_dom_content_is_present() -> None:
    obs = load("shadow_dom")
    view = process(obs)
    assert body(view.text)[1:] == [
        f"\t[{raw_id(obs, 'heading', 'Newsletter')}] heading 'Newsletter'",
        f"\t[{raw_id(obs, 'textbox', 'Your email')}] textbox 'Your email'",
        f"\t[{raw_id(obs, 'button', 'Subscribe')}] button 'Subscribe'",
    ]


# ---------------------------------------------------------------------------------------------------------------------
# Forms and redaction


@pytest.fixture(scope="module")
def form() -> Observation:
    return load("form")


def test_form_lines(form: Observation) -> None:
    view = process(form)
    i = partial(raw_id, form)
    lines = body(view.text)
    assert lines == [
        f"[{i('RootWebArea', 'Checkout')}] RootWebArea 'Checkout' focused: True",
        f"\t[{i('heading', 'Checkout')}] heading 'Checkout'",
        f"\t[{i('form', '')}] form ''",
        # label texts are gone: each control's name already says them
        f"\t\t[{i('textbox', 'Full name')}] textbox 'Full name' value: 'Ada Lovelace' required: True",
        f"\t\t[{i('textbox', 'Email')}] textbox 'Email'",
        f"\t\t[{i('textbox', 'Password')}] textbox 'Password' value: ••••",
        f"\t\t[{i('textbox', 'Card number')}] textbox 'Card number' value: •••• focused: True",
        f"\t\t[{i('textbox', 'Payment reference')}] textbox 'Payment reference' value: '7700 1234'",
        f"\t\t[{i('textbox', 'Gift code')}] textbox 'Gift code' value: ••••",
        f"\t\t[{i('checkbox', 'Send me news')}] checkbox 'Send me news' checked: True",
        f"\t\t[{i('group', 'Shipping')}] group 'Shipping'",
        # the legend's text: a group's name is not made of its content in general (an aria-label), so it stays
        f"\t\t\t[{i('StaticText', 'Shipping')}] StaticText 'Shipping'",
        f"\t\t\t[{i('radio', 'Standard')}] radio 'Standard' checked: True",
        f"\t\t\t[{i('radio', 'Express')}] radio 'Express' checked: False",
        f"\t\t[{i('combobox', 'Country')}] combobox 'Country' value: 'Germany' expanded: False",
        f"\t\t\t[{i('option', 'France')}] option 'France'",
        f"\t\t\t[{i('option', 'Germany')}] option 'Germany' selected: True",
        f"\t\t\t[{i('option', 'Italy')}] option 'Italy'",
        f"\t\t[{i('textbox', 'Notes')}] textbox 'Notes' value: 'Leave at the door'",
        f"\t\t[{i('button', 'Apply coupon')}] button 'Apply coupon' disabled: True",
        f"\t\t[{i('button', 'Place order')}] button 'Place order'",
    ]
    # noisy properties never printed
    for noise in ("focusable", "editable", "settable", "multiline", "readonly", "level", "invalid", "labelledby"):
        assert f"{noise}:" not in view.text


def test_form_element_info(form: Observation) -> None:
    view = process(form)
    name_field = view.elements[raw_id(form, "textbox", "Full name")]
    assert (name_field.role, name_field.name, name_field.value) == ("textbox", "Full name", "Ada Lovelace")
    assert name_field.props["required"] == "True"
    assert name_field.props["editable"] == "plaintext"  # kept for action validation, not printed
    assert name_field.ref == ElementRef(backend_node_id=name_field.id, target=None)
    form_id = raw_id(form, "form", "")
    assert name_field.parent == form_id
    assert name_field.id in view.elements[form_id].children
    assert view.elements[raw_id(form, "button", "Apply coupon")].props["disabled"] == "True"


SECRETS = ("hunter2secret", "4111 1111 1111 1111", "4111111111111111", "5555 5555 5555 4444", "5555555555554444")


def test_secret_values_never_appear(form: Observation) -> None:
    view = process(form)
    dumped = view.text + repr(list(view.elements.values()))
    for secret in SECRETS:
        assert secret not in dumped
    assert "•••••" not in dumped  # Chromium's masking gives the password's length away; the mask does not
    for name in ("Password", "Card number", "Gift code"):
        element = view.elements[raw_id(form, "textbox", name)]
        assert element.redacted and element.value == "••••"
        assert element.children == ()  # the field's inner text (the raw value) is not a line


def test_fixture_really_holds_the_secrets(form: Observation) -> None:
    """Guards the test above: without redaction the card numbers are in the output."""
    text = process(form, ObservationConfig(redact=False)).text
    assert "'4111 1111 1111 1111'" in text and "'5555 5555 5555 4444'" in text


def test_dom_marked_fields_are_redacted_through_the_hook(form: Observation) -> None:
    """autocomplete="cc-number" is not in the AX tree; whoever knows it passes the element in `sensitive`."""
    pay = raw_id(form, "textbox", "Payment reference")
    view = process(form, sensitive=[ElementRef(backend_node_id=pay)])
    assert f"[{pay}] textbox 'Payment reference' value: ••••" in view.text
    assert "7700 1234" not in view.text


def _field(name: str, value: str, role: str = "textbox") -> RawNode:
    return RawNode(role=role, name=name, value=value, props={}, ignored=False, backend_id=1, target=None, frame_id="f")


@pytest.mark.parametrize("name, value", [
    ("Password", "abc"), ("Mot de passe", "abc"), ("PIN", "1234"), ("Card number", "4000"), ("CVV", "123"),
    ("Security code", "123"), ("Expiry date", "04/27"), ("MM / YY", "04/27"), ("Kartennummer", "1"),
    ("Anything", "•••••"), ("Reference", "4242 4242 4242 4242"), ("Reference", "378282246310005"),
    ("Password", ""),  # empty: what the agent types into it is a secret all the same
])
def test_sensitive_fields(name: str, value: str) -> None:
    assert is_sensitive_field(_field(name, value))


@pytest.mark.parametrize("name, value", [
    ("Search", "kettle"), ("Order number", "1234 5678 9012 3456"), ("Phone", "+33 6 12 34 56 78"),
    ("Quantity", "12"), ("Passenger name", "Ada"),
])
def test_not_sensitive_fields(name: str, value: str) -> None:
    assert not is_sensitive_field(_field(name, value))


def test_luhn() -> None:
    assert luhn_valid("4111111111111111") and luhn_valid("79927398713")
    assert not luhn_valid("4111111111111112")
    assert looks_like_card_number("4111-1111-1111-1111")
    assert not looks_like_card_number("411111111111")  # 12 digits: too short for a card


# ---------------------------------------------------------------------------------------------------------------------
# Frames


def test_same_origin_iframe_content_is_under_its_iframe() -> None:
    obs = load("iframe_same_origin")
    assert len(obs.frames) == 2 and obs.frames[1].target is None
    view = process(obs)
    iframe = raw_id(obs, "Iframe", "Chat widget")
    textbox = raw_id(obs, "textbox", "Message", frame_index=1)
    send = raw_id(obs, "button", "Send", frame_index=1)
    lines = body(view.text)
    at = lines.index(f"\t[{iframe}] Iframe 'Chat widget'")
    assert lines[at + 1:at + 4] == [
        f"\t\t[{textbox}] textbox 'Message'",
        f"\t\t[{send}] button 'Send'",
        f"\t[{raw_id(obs, 'StaticText', 'Outside the frame')}] StaticText 'Outside the frame'",
    ]
    assert view.elements[textbox].parent == iframe
    assert view.elements[textbox].frame_id == obs.frames[1].frame_id
    assert view.elements[textbox].locator.ancestors[-1].role == "Iframe"


def test_cross_origin_iframe_ids_are_remapped_on_collision() -> None:
    obs = load("iframe_cross_origin")
    child = obs.frames[1]
    assert child.target == child.frame_id  # an out-of-process frame: a target of its own
    view = process(obs)
    iframe = raw_id(obs, "Iframe", "Partner widget")
    send_raw = raw_id(obs, "button", "Send", frame_index=1)
    textbox_raw = raw_id(obs, "textbox", "Message", frame_index=1)
    tab_ids = {node.backendDOMNodeId for node in obs.frames[0].nodes}
    assert send_raw in tab_ids, "this capture is meant to hold a real collision"
    send = send_raw + 1000
    textbox = textbox_raw + 1000 if textbox_raw in tab_ids else textbox_raw
    lines = body(view.text)
    at = lines.index(f"\t[{iframe}] Iframe 'Partner widget'")
    assert lines[at + 1:at + 3] == [f"\t\t[{textbox}] textbox 'Message'", f"\t\t[{send}] button 'Send'"]
    assert view.ref(send) == ElementRef(backend_node_id=send_raw, target=child.target)
    assert view.ref(textbox) == ElementRef(backend_node_id=textbox_raw, target=child.target)
    assert view.ref(iframe) == ElementRef(backend_node_id=iframe, target=None)


def test_frame_with_unknown_owner_is_kept_under_the_root() -> None:
    obs = load("iframe_same_origin").model_copy(deep=True)
    obs.frames[1].owner_node_id = None
    view = process(obs)
    lines = body(view.text)
    assert lines[-2:] == [
        f"\t[{raw_id(obs, 'textbox', 'Message', frame_index=1)}] textbox 'Message'",
        f"\t[{raw_id(obs, 'button', 'Send', frame_index=1)}] button 'Send'",
    ]


def test_frame_whose_owner_is_not_in_the_tree_is_hidden() -> None:
    obs = load("iframe_same_origin").model_copy(deep=True)
    obs.frames[1].owner_node_id = 999_999
    assert "Send" not in process(obs).text


# ---------------------------------------------------------------------------------------------------------------------
# Header, quoting, configuration


def test_header_lists_tabs_and_marks_the_observed_one() -> None:
    obs = load("shop_home").model_copy(deep=True)
    obs.tabs = [
        TabInfo(tab_id=obs.tab_id, index=4, title="stale title", url=obs.url, active=False),
        TabInfo(tab_id=77, index=2, title="Orders  list\n", url="http://x/orders", active=True),
    ]
    obs.dialog = DialogInfo(dialog_type="confirm", message="Remove Kid's Mug?")
    view = process(obs)
    assert view.text.split("\n")[:4] == [
        "Tab 0: Orders list | Tab 1 (current): Acme Shop",
        f"URL: {obs.url}",
        'Dialog (confirm): "Remove Kid\'s Mug?"',
        "",
    ]
    assert view.tab_ids == (77, obs.tab_id)


def test_quote() -> None:
    assert quote("Go") == "'Go'"
    assert quote("Kid's") == '"Kid\'s"'
    assert quote("""Kid's "big" mug""") == """'Kid\\'s "big" mug'"""


def test_render_props_are_configurable(form: Observation) -> None:
    config = ObservationConfig(render_props=("value", "checked"))
    text = process(form, config).text
    assert "required:" not in text and "focused:" not in text and "disabled:" not in text
    assert f"[{raw_id(form, 'checkbox', 'Send me news')}] checkbox 'Send me news' checked: True" in text


def test_every_line_has_the_expected_shape() -> None:
    shape = re.compile(r"^\t*\[\d+\] [A-Za-z]+ (?:'[^']*'|\"[^\"]*\")( [a-zA-Z]+: \S.*)?$")
    for name in ("shop_home", "form", "iframe_same_origin", "iframe_cross_origin", "shadow_dom", "hidden"):
        for line in body(process(load(name)).text):
            assert shape.match(line), line


# ---------------------------------------------------------------------------------------------------------------------
# Size and speed


def test_large_page(capsys: pytest.CaptureFixture[str]) -> None:
    obs = load("large")
    assert 21_000 <= sum(len(frame.nodes) for frame in obs.frames) <= 22_000
    process(obs)  # warm-up
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        view = process(obs)
        runs.append(time.perf_counter() - started)
    assert len(view.elements) > 5_000
    assert "[" in view.text and "InlineTextBox" not in view.text
    with capsys.disabled():
        print(f"\nlarge page: {view.node_count_raw} AX nodes -> {len(view.elements)} lines, "
              f"{len(view.text):,} chars; process() best {min(runs) * 1000:.0f} ms, worst {max(runs) * 1000:.0f} ms")
