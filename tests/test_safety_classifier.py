"""SafetyClassifier: every rule, with and without DOM facts, the multilingual vocabulary and its exceptions."""

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
from branchwise.core.classes import ActionClass, ActionClassifier
from branchwise.core.requests import ExpectedRequest
from branchwise.observation import PageView
from branchwise.protocol import ElementFacts, FormFacts, LinkFacts
from branchwise.safety import Intent, SafetyClassifier, Vocabulary, normalize

from pageviews import page

SAFE, NAVIGATION = ActionClass.SAFE, ActionClass.NAVIGATION
DESTRUCTIVE, TERMINATING = ActionClass.DESTRUCTIVE, ActionClass.TERMINATING
SITE = "https://shop.example"
URL = f"{SITE}/product/7"
CLASSIFIER = SafetyClassifier()


def verdict(action: Action, view: PageView | None, facts: ElementFacts | None = None) -> tuple[ActionClass, str]:
    result = CLASSIFIER.classify(action, view, facts)
    assert result.reasons and all(result.reasons)
    return result.action_class, "; ".join(result.reasons)


def on(role: str, name: str, props: dict[str, str] | None = None, ancestor: str | None = None) -> PageView:
    """A page whose element [1] is the given one."""
    if ancestor is not None:
        return page((role, name, props or {}, ancestor), url=URL)
    return page((role, name, props or {}), url=URL)


def facts(**fields: object) -> ElementFacts:
    return ElementFacts(found=True, document_url=URL, **fields)  # type: ignore[arg-type]


def form(method: str = "post", action: str = "/cart/add", submits: bool = True, label: str = "") -> FormFacts:
    return FormFacts(method=method, action=SITE + action if action.startswith("/") else action,  # type: ignore[arg-type]
                     submits=submits, submit_buttons=1, submitter_label=label)


def submit_button(method: str = "post", action: str = "/cart/add") -> ElementFacts:
    return facts(tag="button", type="submit", form=form(method, action))


def link(href: str, raw: str | None = None, target: str = "") -> ElementFacts:
    return facts(tag="a", link=LinkFacts(href=href, raw_href=raw if raw is not None else href, target=target))


OUTSIDE = facts(tag="button", type="button")


def test_implements_the_protocol_and_stop_terminates() -> None:
    classifier: ActionClassifier = CLASSIFIER
    assert classifier.classify(Stop("42"), None).action_class is TERMINATING
    assert verdict(Stop("N/A"), on("button", "x")) == (TERMINATING, "ends the task with an answer")


# --- actions without an element ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("action", "expected", "reason"), [
    (Goto(f"{SITE}/category/garden"), NAVIGATION, f"opens {SITE}/category/garden: loads a page"),
    (NewTab(f"{SITE}/help"), NAVIGATION, f"opens in a new tab {SITE}/help: loads a page"),
    (NewTab(), SAFE, "opens an empty tab"),
    (GoBack(), NAVIGATION, "goes back to the previous page of the tab"),
    (GoForward(), NAVIGATION, "goes forward to the next page of the tab"),
    (TabFocus(1), SAFE, "switches to tab 1"),
    (CloseTab(), SAFE, "closes the current tab"),
    (Scroll("down"), SAFE, "scrolls down: changes only the view"),
])
def test_untargeted_actions(action: Action, expected: ActionClass, reason: str) -> None:
    assert verdict(action, None) == (expected, reason)


@pytest.mark.parametrize("url", [f"{SITE}/logout", f"{SITE}/account/delete?id=3", f"{SITE}/newsletter/unsubscribe"])
def test_goto_an_address_naming_a_delete_action_is_destructive(url: str) -> None:
    cls, reason = verdict(Goto(url), None)
    assert cls is DESTRUCTIVE and "delete word" in reason and "a GET request can still change things" in reason


def test_goto_outside_the_web_is_safe() -> None:
    assert verdict(Goto("mailto:help@shop.example"), None)[0] is SAFE


# --- hover, select, typing -----------------------------------------------------------------------------------------


def test_hover_select_and_typing_without_enter_are_safe() -> None:
    assert verdict(Hover(1), on("link", "Delete account")) == (
        SAFE, "hovers over the link 'Delete account': at most shows a tooltip or a menu")
    # Kept safe even in a POST form: a drop-down sends nothing until the form is submitted.
    assert verdict(SelectOption(1, ("Blue",)), on("combobox", "Color"), facts(tag="select", form=form(
        submits=False))) == (SAFE, "picks 'Blue' in the combobox 'Color': nothing is sent until the form is submitted")
    assert verdict(Type(1, "2", press_enter=False), on("spinbutton", "Quantity"), facts(tag="input", form=form())) == (
        SAFE, "types into the spinbutton 'Quantity' without submitting it")


# --- form submit buttons ---------------------------------------------------------------------------------------------


def test_submit_button_of_a_post_form_names_method_and_action() -> None:
    cls, reason = verdict(Click(1), on("button", "Add to cart"), submit_button())
    assert cls is DESTRUCTIVE
    assert reason == ("the button 'Add to cart' submits a POST form to /cart/add; "
                      "the label 'Add to cart' is a commit word (en)")


@pytest.mark.parametrize("label", ["Search", "Next page", "Sort", "Apply filters", "Continue"])
def test_post_form_is_destructive_whatever_the_label(label: str) -> None:
    cls, reason = verdict(Click(1), on("button", label), submit_button(action="/search"))
    assert cls is DESTRUCTIVE and reason.startswith(f"the button '{label}' submits a POST form to /search")


def incomplete(invalid: int = 1, element_invalid: bool = False, validates: bool = True, gated: bool = True,
               tag: str = "button", kind: str = "submit") -> ElementFacts:
    """A submit button (or a field) of a POST form the browser will not send as it is: `invalid` other fields are
    required and empty."""
    return facts(tag=tag, type=kind, gated=gated, form=form().model_copy(update={
        "invalid_fields": invalid, "element_invalid": element_invalid, "validates": validates}))


def test_a_form_the_browser_will_not_send_runs_under_the_gate_without_a_question() -> None:
    """An empty required field keeps the browser from sending the form: 6 of the 7 questions the safety corpus found
    about actions that sent nothing were such clicks (an empty comment, sign-in or invite form)."""
    cls, reason = verdict(Click(1), on("button", "Create issue"), incomplete(invalid=2))
    assert cls is SAFE, reason
    assert "2 of its fields are required and empty or invalid: the browser will not send it" in reason
    assert verdict(Press("Enter", 1), on("textbox", "Title"), incomplete(tag="input", kind="text"))[0] is SAFE


def test_a_form_that_may_be_sent_still_asks() -> None:
    # Complete, or the only invalid field is the one being typed into, or the form skips validation, or the tab is
    # not gated (a script could send it anyway, unheld).
    assert verdict(Click(1), on("button", "Create issue"), incomplete(invalid=0))[0] is DESTRUCTIVE
    typed = incomplete(invalid=0, element_invalid=True, tag="input", kind="text")
    assert verdict(Type(1, "Offline tiles", press_enter=True), on("textbox", "Title"), typed)[0] is DESTRUCTIVE
    assert verdict(Press("Enter", 1), on("textbox", "Title"), typed)[0] is SAFE
    assert verdict(Click(1), on("button", "Create issue"), incomplete(validates=False))[0] is DESTRUCTIVE
    assert verdict(Click(1), on("button", "Create issue"), incomplete(gated=False))[0] is DESTRUCTIVE


def test_post_to_another_site_names_the_full_address() -> None:
    cls, reason = verdict(Click(1), on("button", "Pay"), submit_button(action="https://pay.example/charge"))
    assert cls is DESTRUCTIVE and "submits a POST form to https://pay.example/charge" in reason


@pytest.mark.parametrize("label", ["Search", "Sort", "Go", "Filter"])
def test_get_form_submit_is_navigation(label: str) -> None:
    assert verdict(Click(1), on("button", label), submit_button("get", "/search")) == (
        NAVIGATION, f"the button '{label}' submits a GET form to /search: loads a page (a search or a filter)")


def test_get_form_with_a_commit_label_is_destructive() -> None:
    cls, reason = verdict(Click(1), on("button", "Delete selected"), submit_button("get", "/messages"))
    assert cls is DESTRUCTIVE
    assert "the label 'Delete selected' has the commit word 'delete' (en): a GET request can still change" in reason
    assert verdict(Click(1), on("button", "Go"), submit_button("get", "/items/remove"))[0] is DESTRUCTIVE


def test_submitters_formmethod_is_what_counts() -> None:
    # The extension already resolves formmethod/formaction: a "Save for later" button posting elsewhere.
    assert verdict(Click(1), on("button", "Preview"), submit_button("get", "/preview"))[0] is NAVIGATION
    assert verdict(Click(1), on("button", "Preview"), submit_button("post", "/preview"))[0] is DESTRUCTIVE


def test_dialog_forms() -> None:
    assert verdict(Click(1), on("button", "Close"), submit_button("dialog", "/")) == (
        SAFE, "the button 'Close' only closes a dialog (form method dialog)")
    assert verdict(Click(1), on("button", "Delete"), submit_button("dialog", "/"))[0] is DESTRUCTIVE


def test_disabled_and_reset_buttons_are_safe() -> None:
    disabled = facts(tag="button", type="submit", disabled=True, form=form())
    assert verdict(Click(1), on("button", "Add to cart"), disabled) == (
        SAFE, "the button 'Add to cart' is disabled: clicking it does nothing")
    reset = facts(tag="input", type="reset", form=form(submits=False))
    assert verdict(Click(1), on("button", "Reset"), reset) == (SAFE, "the button 'Reset' resets the form's fields")


def test_a_field_of_a_form_is_safe_to_click_even_with_a_commit_word() -> None:
    checkbox = facts(tag="input", type="checkbox", form=form(submits=False))
    assert verdict(Click(1), on("checkbox", "Subscribe to the newsletter"), checkbox) == (
        SAFE, "clicks the checkbox 'Subscribe to the newsletter', a field of a form: nothing is sent until the form "
              "is submitted")


# --- links ---------------------------------------------------------------------------------------------------------


def test_link_to_the_same_site_is_navigation() -> None:
    assert verdict(Click(1), on("link", "Garden"), link(f"{SITE}/category/garden", "/category/garden")) == (
        NAVIGATION, "the link 'Garden' is a link to /category/garden on the same site: navigation")


def test_link_to_another_site_and_new_tab() -> None:
    cls, reason = verdict(Click(1), on("link", "Docs"), link("https://docs.example/start", target="_blank"))
    assert cls is NAVIGATION
    assert reason == ("the link 'Docs' is a link to https://docs.example/start on another site: navigation in a new "
                      "tab")


def test_anchor_on_the_same_page() -> None:
    assert verdict(Click(1), on("link", "Skip to main content"), link(f"{URL}#main", "#main")) == (
        NAVIGATION, "the link 'Skip to main content' jumps to #main on this page")


@pytest.mark.parametrize("label", ["Delete", "Remove item", "Unsubscribe", "Sign out", "Place order", "Löschen",
                                   "Se déconnecter", "Eliminar"])
def test_link_with_a_commit_label_is_destructive(label: str) -> None:
    cls, reason = verdict(Click(1), on("link", label), link(f"{SITE}/x/7", "/x/7"))
    assert cls is DESTRUCTIVE and "a GET link can still change things" in reason


@pytest.mark.parametrize("label", ["Proceed to checkout", "Sign in", "Register", "Zur Kasse", "Iniciar sesión",
                                   "Se connecter"])
def test_link_with_an_entry_word_only_opens_the_form(label: str) -> None:
    assert verdict(Click(1), on("link", label), link(f"{SITE}/checkout", "/checkout"))[0] is NAVIGATION


@pytest.mark.parametrize("label", ["Reply to sunny_walrus47", "Submit", "Comment", "Create issue", "Antworten",
                                   "Répondre", "Comentar"])
def test_link_naming_what_one_writes_only_opens_the_form(label: str) -> None:
    """A link to where a reply, a post or an issue is written sends nothing: the form it opens is asked about when it
    is submitted. The forum's 'Reply to …' and 'Submit' links were false alarms in the safety corpus."""
    cls, reason = verdict(Click(1), on("link", label), link(f"{SITE}/f/books/3/-/comment/7", "/f/books/3/-/comment/7"))
    assert cls is NAVIGATION and "opens the form where it is written; nothing is sent until that is submitted" in reason


@pytest.mark.parametrize("label", ["Confirm subscription", "Post now", "Delete reply", "Buy now"])
def test_a_link_whose_label_does_more_than_open_a_form_still_asks(label: str) -> None:
    assert verdict(Click(1), on("link", label), link(f"{SITE}/x/7", "/x/7"))[0] is DESTRUCTIVE


def test_link_whose_address_names_a_delete_action() -> None:
    cls, reason = verdict(Click(1), on("link", "Emma"), link(f"{SITE}/users/5/delete", "/users/5/delete"))
    assert cls is DESTRUCTIVE and "whose path has the delete word 'delete' (en)" in reason


@pytest.mark.parametrize("raw", ["#", "javascript:void(0)", ""])
def test_script_links_are_judged_like_buttons_outside_forms(raw: str) -> None:
    href = f"{URL}#" if raw == "#" else (raw or URL)
    cls, reason = verdict(Click(1), on("link", "Delete draft"), link(href, raw))
    assert cls is DESTRUCTIVE
    assert reason.startswith(f"the link 'Delete draft' is a link that runs a script (href '{raw}')")
    assert verdict(Click(1), on("link", "Show more"), link(href, raw))[0] is SAFE
    assert verdict(Click(1), on("link", "Frobnicate"), link(href, raw))[0] is DESTRUCTIVE


def test_mailto_link_is_safe() -> None:
    assert verdict(Click(1), on("link", "Write to us"), link("mailto:help@shop.example"))[0] is SAFE


# --- buttons outside forms (their script decides) -------------------------------------------------------------------


def test_button_outside_forms_with_a_commit_word() -> None:
    assert verdict(Click(1), on("button", "Like"), OUTSIDE)[0] is DESTRUCTIVE
    assert verdict(Click(1), on("button", "Send"), OUTSIDE) == (
        DESTRUCTIVE, "the button 'Send' is a button outside any form: its script decides what it does; "
                     "the label 'Send' is a commit word (en)")


@pytest.mark.parametrize(("label", "expected"), [
    ("Next page", NAVIGATION), ("Back", NAVIGATION), ("Search", NAVIGATION), ("Filter", NAVIGATION),
    ("Sort by price", NAVIGATION), ("Expand all", SAFE), ("Show more", SAFE), ("Close", SAFE), ("Menu", SAFE),
])
def test_button_outside_forms_with_a_navigational_or_transient_label(label: str, expected: ActionClass) -> None:
    cls, reason = verdict(Click(1), on("button", label), OUTSIDE)
    assert cls is expected and reason.startswith(f"the button '{label}' is a button outside any form; the label")


def test_button_outside_forms_with_another_label_is_destructive() -> None:
    assert verdict(Click(1), on("button", "Continue"), OUTSIDE) == (
        DESTRUCTIVE, "the button 'Continue' is a button outside any form, and its label names no navigation: its "
                     "script may send data")


GATED = OUTSIDE.model_copy(update={"gated": True})


@pytest.mark.parametrize(("element", "facts_"), [
    (("button", "Continue"), GATED),
    (("button", "Submit"), GATED),
    (("button", "Login"), GATED),
    (("button", "Bestätigen"), GATED),
    (("link", "2"), facts(tag="a", gated=True, link=LinkFacts(href=URL + "#", raw_href="#"))),
    (("button", "Apply"), facts(tag="button", type="button", form=form(submits=False), gated=True)),
])
def test_a_script_driven_control_runs_under_the_gate_instead_of_asking_first(
        element: tuple[str, str], facts_: ElementFacts) -> None:
    cls, reason = verdict(Click(1), on(*element), facts_)
    assert cls is SAFE, reason
    assert "its script decides what it does" in reason and "runs under the network gate" in reason
    if element[1] in ("Submit", "Login", "Bestätigen"):  # a word that confirms or signs in names no change itself
        assert f"the label '{element[1]}' is a word that names no change of its own" in reason


def test_a_script_driven_control_still_asks_first_where_the_gate_cannot_see_everything() -> None:
    # Not gated (a run without the gate): asked before the click, as before.
    assert verdict(Click(1), on("button", "Continue"), OUTSIDE)[0] is DESTRUCTIVE
    # Gated, but a WebSocket is open: a message on it would go out unasked.
    open_socket = GATED.model_copy(update={"ungated_channels": ["WebSocket", "service worker"]})
    cls, reason = verdict(Click(1), on("button", "Continue"), open_socket)
    assert cls is DESTRUCTIVE
    assert reason.endswith("the page has WebSocket, service worker open, which the network gate cannot hold: its "
                           "script may send data there")


@pytest.mark.parametrize("label", ["Delete", "Buy now", "Send", "Publish", "Save changes", "Confirm order", "Kaufen"])
def test_a_commit_word_asks_before_the_click_even_under_the_gate(label: str) -> None:
    cls, reason = verdict(Click(1), on("button", label), GATED)
    assert cls is DESTRUCTIVE and "commit word" in reason


def test_non_submitting_button_inside_a_form() -> None:
    inside = facts(tag="button", type="button", form=form(submits=False))
    cls, reason = verdict(Click(1), on("button", "Apply coupon"), inside)
    assert cls is DESTRUCTIVE and "a button that does not submit its form" in reason


def test_popup_and_disclosure_buttons_are_safe() -> None:
    assert verdict(Click(1), on("button", "Account", {"hasPopup": "menu"}), OUTSIDE)[0] is SAFE
    assert verdict(Click(1), on("button", "Shipping details", {"expanded": "false"}), OUTSIDE)[0] is SAFE
    # A commit word wins over the popup hint.
    assert verdict(Click(1), on("button", "Delete", {"hasPopup": "dialog"}), OUTSIDE)[0] is DESTRUCTIVE


def test_cancel_only_closes_a_dialog_inside_one() -> None:
    assert verdict(Click(1), on("button", "Cancel", ancestor="dialog"), OUTSIDE) == (
        SAFE, "the button 'Cancel' in a dialog only closes it")
    assert verdict(Click(1), on("button", "Abbrechen", ancestor="alertdialog"), OUTSIDE)[0] is SAFE
    assert verdict(Click(1), on("button", "Cancel"), OUTSIDE)[0] is DESTRUCTIVE
    assert verdict(Click(1), on("button", "Cancel order", ancestor="dialog"), OUTSIDE)[0] is DESTRUCTIVE


def test_elements_with_click_handlers_or_link_role_count_as_buttons() -> None:
    div = facts(tag="div", inline_handlers=["onclick"])
    assert verdict(Click(1), on("generic", "Archive thread"), div)[0] is DESTRUCTIVE
    fake_link = facts(tag="span", role="link")
    cls, reason = verdict(Click(1), on("link", "Open editor"), fake_link)
    assert cls is DESTRUCTIVE and "a link without an address" in reason


def test_plain_elements() -> None:
    assert verdict(Click(1), on("StaticText", "Price"), facts(tag="span")) == (
        SAFE, "clicks the StaticText 'Price', which is not a button or a link")
    assert verdict(Click(1), on("heading", "Delete your account"), facts(tag="h2"))[0] is DESTRUCTIVE


# --- without facts: fail safe ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("missing", [None, ElementFacts(found=False)])
def test_without_facts_a_button_is_destructive(missing: ElementFacts | None) -> None:
    assert verdict(Click(1), on("button", "Search"), missing) == (
        DESTRUCTIVE, "the form of the button 'Search' is unknown (the page could not be inspected)")
    assert verdict(Click(1), on("menuitem", "Next"), missing)[0] is DESTRUCTIVE
    assert verdict(Click(1), on("button", "Search", {"disabled": "true"}), missing)[0] is SAFE


def test_without_facts_links_and_other_elements() -> None:
    assert verdict(Click(1), on("link", "Garden")) == (
        NAVIGATION, "the link 'Garden' is a link: loads a page (its address could not be read)")
    assert verdict(Click(1), on("link", "Delete"))[0] is DESTRUCTIVE
    assert verdict(Click(1), on("checkbox", "Remember me"))[0] is SAFE
    assert verdict(Click(9), on("button", "x")) == (DESTRUCTIVE, "cannot see the element")
    assert verdict(Click(1), None) == (DESTRUCTIVE, "cannot see the element")


# --- Enter -----------------------------------------------------------------------------------------------------------


def test_enter_in_a_field_of_a_post_form_submits_it() -> None:
    quantity = facts(tag="input", type="number", form=form(label="Add to cart"))
    assert verdict(Type(1, "2", press_enter=True), on("spinbutton", "Quantity"), quantity) == (
        DESTRUCTIVE, "Enter in the spinbutton 'Quantity' submits a POST form to /cart/add; "
                     "the label 'Add to cart' is a commit word (en)")
    assert verdict(Press("Enter", 1), on("spinbutton", "Quantity"), quantity)[0] is DESTRUCTIVE


def test_enter_in_a_get_search_form_is_navigation() -> None:
    field = facts(tag="input", type="search", form=form("get", "/search"))
    assert verdict(Type(1, "lamp", press_enter=True), on("searchbox", "Search products"), field) == (
        NAVIGATION, "Enter in the searchbox 'Search products' submits a GET form to /search: loads a page (a search "
                    "or a filter)")


def test_enter_where_it_submits_nothing_by_itself() -> None:
    search = facts(tag="input", type="search")
    assert verdict(Type(1, "lamp", press_enter=True), on("searchbox", "Search"), search)[0] is NAVIGATION
    chat = facts(tag="div", contenteditable=True, role="textbox")
    cls, reason = verdict(Type(1, "hi", press_enter=True), on("textbox", "Message"), chat)
    assert cls is DESTRUCTIVE and reason.endswith("outside any form: the page's script may send it (as chats do)")
    several = facts(tag="input", type="text", form=form(submits=False))
    assert verdict(Type(1, "x", press_enter=True), on("textbox", "First name"), several)[0] is DESTRUCTIVE


def test_enter_without_facts_or_focus_is_destructive() -> None:
    assert verdict(Type(1, "lamp", press_enter=True), on("searchbox", "Search")) == (
        DESTRUCTIVE, "Enter in the searchbox 'Search' may submit its form, and the page could not be inspected to "
                     "tell")
    assert verdict(Press("Enter"), on("searchbox", "Search")) == (
        DESTRUCTIVE, "presses Enter on whatever has focus, which may submit a form")
    assert verdict(Press("Control+Enter"), None)[0] is DESTRUCTIVE


def test_enter_or_space_on_a_button_or_link_is_a_click() -> None:
    assert verdict(Press("Enter", 1), on("button", "Add to cart"), submit_button())[0] is DESTRUCTIVE
    garden = link(f"{SITE}/category/garden", "/category/garden")
    assert verdict(Press("Enter", 1), on("link", "Garden"), garden)[0] is NAVIGATION
    assert verdict(Press("Space", 1), on("button", "Place order"), submit_button())[0] is DESTRUCTIVE
    assert verdict(Press("Tab"), None) == (SAFE, "presses Tab, which does not submit anything")


# --- what an approval would let through ----------------------------------------------------------------------------


def sends(action: Action, view: PageView | None, element: ElementFacts | None = None) -> tuple[ExpectedRequest, ...]:
    return CLASSIFIER.classify(action, view, element).sends


def test_a_post_forms_submission_names_its_method_and_absolute_action() -> None:
    posted = (ExpectedRequest("POST", f"{SITE}/cart/add"),)
    assert sends(Click(1), on("button", "Add to cart"), submit_button()) == posted
    quantity = facts(tag="input", type="number", form=form(label="Add to cart"))
    assert sends(Type(1, "2", press_enter=True), on("spinbutton", "Quantity"), quantity) == posted
    assert sends(Press("Enter", 1), on("spinbutton", "Quantity"), quantity) == posted
    assert sends(Press("Space", 1), on("button", "Add to cart"), submit_button()) == posted
    # The query is part of the address; a fragment never reaches the server.
    assert sends(Click(1), on("button", "Pay"), submit_button(action="https://pay.example/charge?o=7#top")) == (
        ExpectedRequest("POST", "https://pay.example/charge?o=7"),)


def test_nothing_is_named_when_what_it_sends_cannot_be_known() -> None:
    # A script's button, a '#' link with a handler, no facts, Enter in a chat box: destructive, but each request it
    # makes is asked about at the gate.
    assert sends(Click(1), on("button", "Place order"), OUTSIDE) == ()
    assert sends(Click(1), on("link", "Delete account"), link(f"{URL}#", "#")) == ()
    assert sends(Click(1), on("button", "Add to cart")) == ()
    chat = facts(tag="div", contenteditable=True, role="textbox")
    assert sends(Type(1, "hi", press_enter=True), on("textbox", "Message"), chat) == ()
    assert sends(Click(1), on("button", "Pay"), submit_button(action="javascript:void(0)")) == ()
    # GET forms, dialogs and links send no mutating request to allow.
    assert sends(Click(1), on("button", "Delete selected"), submit_button("get", "/messages")) == ()
    assert sends(Click(1), on("button", "Delete"), submit_button("dialog", "/")) == ()


def test_an_expected_request_drops_the_fragment_and_names_the_method_in_capitals() -> None:
    assert ExpectedRequest.of("post", " https://shop.example/a?b=1#c ") == ExpectedRequest(
        "POST", "https://shop.example/a?b=1")
    assert ExpectedRequest.of("POST", "https://shop.example/a").describe() == "POST to https://shop.example/a"


# --- the vocabulary in four languages --------------------------------------------------------------------------------


@pytest.mark.parametrize(("label", "lang"), [
    ("Buy now", "en"), ("Pay", "en"), ("Place order", "en"), ("Delete", "en"), ("Transfer money", "en"),
    ("Publish", "en"), ("Unsubscribe", "en"), ("Cancel order", "en"), ("Confirm", "en"), ("Post", "en"),
    ("Jetzt kaufen", "de"), ("Zahlungspflichtig bestellen", "de"), ("Konto löschen", "de"), ("Absenden", "de"),
    ("In den Warenkorb", "de"), ("Bestellung stornieren", "de"), ("Überweisung ausführen", "de"),
    ("Passer la commande", "fr"), ("Payer", "fr"), ("Supprimer", "fr"), ("Envoyer", "fr"), ("Publier", "fr"),
    ("Ajouter au panier", "fr"), ("S'abonner", "fr"), ("Annuler la commande", "fr"),
    ("Comprar ahora", "es"), ("Pagar", "es"), ("Realizar pedido", "es"), ("Eliminar", "es"), ("Enviar", "es"),
    ("Añadir al carrito", "es"), ("Cancelar pedido", "es"), ("Darse de baja", "es"),
])
def test_commit_words(label: str, lang: str) -> None:
    cls, reason = verdict(Click(1), on("button", label), OUTSIDE)
    assert cls is DESTRUCTIVE and f"({lang})" in reason


@pytest.mark.parametrize(("label", "expected", "lang"), [
    ("Suchen", NAVIGATION, "de"), ("Nächste Seite", NAVIGATION, "de"), ("Sortieren nach Preis", NAVIGATION, "de"),
    ("Zurück", NAVIGATION, "de"), ("Mehr anzeigen", SAFE, "de"), ("Schließen", SAFE, "de"),
    ("Rechercher", NAVIGATION, "fr"), ("Page suivante", NAVIGATION, "fr"), ("Trier par prix", NAVIGATION, "fr"),
    ("Retour", NAVIGATION, "fr"), ("Voir plus", SAFE, "fr"), ("Fermer", SAFE, "fr"),
    ("Buscar", NAVIGATION, "es"), ("Página siguiente", NAVIGATION, "es"), ("Ordenar por precio", NAVIGATION, "es"),
    ("Volver", NAVIGATION, "es"), ("Ver más", SAFE, "es"), ("Cerrar", SAFE, "es"),
    ("Filter", NAVIGATION, "en"), ("Previous page", NAVIGATION, "en"), ("Collapse all", SAFE, "en"),
])
def test_navigational_and_transient_exceptions(label: str, expected: ActionClass, lang: str) -> None:
    cls, reason = verdict(Click(1), on("button", label), OUTSIDE)
    assert cls is expected and f"({lang})" in reason


def test_whole_words_only() -> None:
    words = Vocabulary()
    assert words.commit("Postleitzahl") is None and words.commit("Post") is not None
    assert words.commit("Sendungsverfolgung") is None and words.commit("Senden") is not None
    assert words.commit("Seguir comprando") is None
    assert words.commit("Mes commandes") is None and words.commit("Commander") is not None
    assert words.commit("Order history") is None
    assert verdict(Click(1), on("link", "Postleitzahl"), link(f"{SITE}/plz", "/plz"))[0] is NAVIGATION


def test_cancel_alone_is_not_a_commit_but_cancel_order_is() -> None:
    words = Vocabulary()
    assert words.commit("Cancel") is None
    match = words.commit("Cancel order")
    assert match is not None and match.intent is Intent.DELETE and match.whole


def test_commit_words_anywhere_in_short_labels_but_only_leading_in_sentences() -> None:
    words = Vocabulary()
    match = words.commit("Yes, delete it")
    assert match is not None and match.phrase.text == "delete" and not match.whole
    assert words.commit("How to delete your account and what happens next") is None
    assert words.commit("Delete your account and everything in it forever now") is not None


def test_longest_phrase_wins() -> None:
    match = Vocabulary().commit("Proceed to checkout")
    assert match is not None and match.phrase.text == "proceed to checkout" and match.intent is Intent.ENTRY


def test_normalize_drops_case_accents_and_punctuation() -> None:
    assert normalize("  Löschen › ") == "loschen"
    assert normalize("S'abonner!") == "s abonner"
    assert normalize("Añadir al CARRITO") == "anadir al carrito"
