"""`inspect` reads the DOM facts the classifier needs (form, effective method and action, link target, handlers) from
real Chromium, including an element in a cross-origin iframe and elements that are gone."""

from __future__ import annotations

import time

import pytest

from branchwise.actions import Click, Type
from branchwise.agent.env import BrowserEnv, EnvView
from branchwise.protocol import ElementFacts, ElementRef, FormFacts, LinkFacts

from harness import Stack, in_page, wait_for

pytestmark = pytest.mark.e2e


def by_name(view: EnvView, role: str, name: str) -> int:
    assert view.page is not None
    found = [e.id for e in view.page.elements.values() if e.role == role and e.name == name]
    assert found, f"no {role} '{name}' in:\n{view.text}"
    return found[0]


@pytest.fixture
def lab(stack: Stack, pages_port: int, request: pytest.FixtureRequest) -> tuple[BrowserEnv, EnvView, str]:
    """The inspect lab, observed once its cross-origin frame has loaded."""
    base = f"http://127.0.0.1:{pages_port}"
    tab = stack.call(stack.session.browser.open_tab(f"{base}/inspect.html?test={request.node.name}"))
    env = BrowserEnv(stack.session.browser, tab.tab_id)
    deadline = time.time() + 10
    while True:  # the cross-origin frame's src is set by script after load
        view = stack.call(env.observe())
        if "Pay now" in view.text or time.time() > deadline:
            return env, view, base
        time.sleep(0.2)


def inspect(stack: Stack, env: BrowserEnv, ids: list[int]) -> dict[int, ElementFacts]:
    return stack.call(env.inspect(ids))


def test_post_form_button_and_field(stack: Stack, lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, base = lab
    add, later = by_name(view, "button", "Add to cart"), by_name(view, "button", "Save for later")
    quantity = by_name(view, "spinbutton", "Quantity")
    facts = inspect(stack, env, [add, later, quantity])
    page = f"{base}/inspect.html?test=test_post_form_button_and_field"
    assert facts[add] == ElementFacts(
        found=True, tag="button", type="submit", document_url=page,
        form=FormFacts(method="post", action=f"{base}/cart/add", submits=True, submit_buttons=2,
                       submitter_label="Add to cart"))
    # The submitter's formmethod, formaction and formtarget win over the form's.
    assert facts[later].form == FormFacts(method="get", action=f"{base}/wishlist", target="_blank", submits=True,
                                          submit_buttons=2, submitter_label="Save for later")
    # Enter in the field clicks the form's default button: the first submit button.
    assert facts[quantity].tag == "input" and facts[quantity].type == "number"
    assert facts[quantity].form == FormFacts(method="post", action=f"{base}/cart/add", submits=True,
                                             submit_buttons=2, submitter_label="Add to cart")


def test_fields_named_like_the_forms_properties_and_svg_links_keep_their_facts(
        stack: Stack, lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, base = lab
    post, svg_link = by_name(view, "button", "Post comment"), by_name(view, "link", "SVG link")
    facts = inspect(stack, env, [post, svg_link])
    assert facts[post].form == FormFacts(method="post", action=f"{base}/wp-comments-post", submits=True,
                                         submit_buttons=1, submitter_label="Post comment")
    assert facts[svg_link].link == LinkFacts(href=f"{base}/svg-target", raw_href="/svg-target", target="_blank")


def test_what_the_browser_would_refuse_to_send(stack: Stack, lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, _ = lab
    create, draft = by_name(view, "button", "Create note"), by_name(view, "button", "Save draft")
    title = by_name(view, "textbox", "Title")
    forms = {i: f.form for i, f in inspect(stack, env, [create, draft, title]).items() if f.form is not None}
    # An empty required title and a malformed email: the browser will not send the form through its button...
    assert (forms[create].validates, forms[create].invalid_fields, forms[create].element_invalid) == (True, 2, False)
    # ... and the title counts itself apart (typing into it may fill it); formnovalidate skips the checks.
    assert (forms[title].invalid_fields, forms[title].element_invalid) == (1, True)
    assert not forms[draft].validates
    assert stack.call(env.execute(Type(title, "Groceries", press_enter=False))).ok
    stack.call(env.observe())
    after = stack.call(env.inspect([create]))[create].form
    assert after is not None and after.invalid_fields == 1


def test_get_search_field_without_a_button_submits_on_enter(stack: Stack,
                                                            lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, base = lab
    field = by_name(view, "searchbox", "Search products")
    facts = inspect(stack, env, [field])[field]
    assert (facts.tag, facts.type, facts.link) == ("input", "search", None)
    assert facts.form == FormFacts(method="get", action=f"{base}/search", submits=True, submit_buttons=0)


def test_links_absolute_and_script(stack: Stack, lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, base = lab
    garden, draft = by_name(view, "link", "Garden"), by_name(view, "link", "Delete draft")
    facts = inspect(stack, env, [garden, draft])
    assert facts[garden].tag == "a" and facts[garden].form is None
    assert facts[garden].link == LinkFacts(href=f"{base}/category/garden", raw_href="/category/garden")
    draft_link = facts[draft].link
    assert draft_link is not None and draft_link.raw_href == "#"
    assert facts[draft].inline_handlers == ["onclick"]


def test_button_outside_forms_and_contenteditable(stack: Stack, lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, _ = lab
    like, message = by_name(view, "button", "Like"), by_name(view, "textbox", "Message")
    facts = inspect(stack, env, [like, message])
    assert (facts[like].tag, facts[like].type, facts[like].form, facts[like].link) == ("button", "button", None, None)
    assert facts[like].inline_handlers == ["onclick"] and not facts[like].disabled
    assert facts[message].contenteditable and facts[message].role == "textbox" and facts[message].form is None


def test_element_in_a_cross_origin_iframe(stack: Stack, lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, base = lab
    pay = by_name(view, "button", "Pay now")
    assert view.page is not None and view.page.elements[pay].target is not None, "the frame runs out of process"
    facts = inspect(stack, env, [pay])[pay]
    frame_origin = base.replace("127.0.0.1", "localhost")
    assert facts.document_url == f"{frame_origin}/inspect-frame.html"
    assert facts.form == FormFacts(method="post", action=f"{frame_origin}/pay", submits=True, submit_buttons=1,
                                   submitter_label="Pay now")


def test_detached_and_unknown_elements_are_not_found(stack: Stack, lab: tuple[BrowserEnv, EnvView, str]) -> None:
    env, view, _ = lab
    vanishing, garden = by_name(view, "button", "Vanishing button"), by_name(view, "link", "Garden")
    assert stack.call(env.execute(Click(vanishing))).ok  # the button removes itself
    facts = inspect(stack, env, [vanishing, garden])
    assert facts[vanishing] == ElementFacts(found=False)
    assert facts[garden].found, "one gone element does not spoil the others"
    unknown = stack.call(env.browser.inspect(env.tab_id, [ElementRef(backend_node_id=987654321),
                                                          ElementRef(backend_node_id=1, target="NO-SUCH-FRAME")]))
    assert unknown == [ElementFacts(found=False), ElementFacts(found=False)]
    assert stack.call(env.browser.inspect(env.tab_id, [])) == []



def test_the_facts_say_whether_the_gate_holds_the_tab_and_what_it_cannot_hold(
        stack: Stack, lab: tuple[BrowserEnv, EnvView, str], request: pytest.FixtureRequest) -> None:
    env, view, base = lab
    button = by_name(view, "button", "Like")
    before = inspect(stack, env, [button])[button]
    assert (before.gated, before.ungated_channels) == (False, [])
    stack.call(env.browser.gate_tab(env.tab_id, True))
    try:
        gated = inspect(stack, env, [button])[button]
        assert (gated.gated, gated.ungated_channels) == (True, [])
        # The page opens a WebSocket: messages on it are not requests the gate can hold.
        in_page(stack, f"{base}/inspect.html?test={request.node.name}",
                f"window.socket = new WebSocket('ws://127.0.0.1:{base.rsplit(':', 1)[1]}/socket')")
        wait_for(lambda: inspect(stack, env, [button])[button].ungated_channels == ["WebSocket"],
                 what="the WebSocket to be seen")
    finally:
        stack.call(env.browser.gate_tab(env.tab_id, False))
