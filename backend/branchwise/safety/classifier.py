"""The destructive-action classifier: WebOperator's Alg. 2, grown with what the page tells.

Beyond Alg. 2's "a button is destructive unless its label navigates", it reads the DOM facts of the target element
(its form and the form's effective method and action, a link's address, inline handlers) and a vocabulary of commit
words and navigational exceptions in four languages (`vocabulary.py`). Every verdict carries short reasons a user
understands: what the element is, and why that makes the action safe, navigation or destructive.

A POST form's submission also says what it will send (`Classification.sends`): its method and absolute action URL,
all that approving the action lets through the network gate.

Fail safe: whatever cannot be told is destructive. A button whose form could not be read (no facts: an old page, a
closed tab) is destructive; a button outside any form is destructive unless its label says it only navigates or changes
the view, because its script can send anything (fetch) — except in a tab the network gate holds where the page has no
channel open the gate cannot hold (a WebSocket, a service worker): there the click runs and the gate asks about whatever
mutating request it really sends, so the user is asked about what happens, not before every click. A commit word
(delete, buy, send...) or a POST form still asks before the click. One deliberate exception: picking an option in a
drop-down stays safe although a page can submit a form on change; that rare case is left to the network gate, which
holds mutating requests no approval covers (`gate.py`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

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
from ..core.classes import ActionClass, Classification
from ..core.requests import ExpectedRequest
from ..observation import ElementInfo, PageView
from ..protocol import ElementFacts, FormFacts, LinkFacts
from .urls import WEB_SCHEMES, anchor_on_page, path_of, same_site, scheme, where
from .vocabulary import LINK_COMMIT_INTENTS, NAMES_NO_CHANGE, Intent, Match, Vocabulary

log = logging.getLogger(__name__)

_TRUE = ("True", "true")
_FALSE = ("", "False", "false")


@dataclass(frozen=True)
class SafetyConfig:
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    # Roles that trigger commands; menu items are as dangerous as buttons ("Delete" in a dropdown).
    button_roles: tuple[str, ...] = ("button", "menuitem", "menuitemcheckbox", "menuitemradio")
    search_roles: tuple[str, ...] = ("searchbox",)
    dialog_roles: tuple[str, ...] = ("dialog", "alertdialog")
    # aria-haspopup as the observation keeps it (CDP's name first).
    popup_props: tuple[str, ...] = ("hasPopup", "haspopup")
    # Inline handlers that make any element act like a button.
    click_handlers: tuple[str, ...] = ("onclick", "onmousedown", "onmouseup", "onpointerdown", "onpointerup")


@dataclass(frozen=True)
class _Target:
    """The element an action aims at, as the page and the DOM describe it."""

    element: ElementInfo | None
    facts: ElementFacts | None
    page_url: str

    @property
    def label(self) -> str:
        return self.element.name if self.element is not None else ""

    @property
    def what(self) -> str:
        if self.element is None:
            tag = self.facts.tag if self.facts is not None and self.facts.found else ""
            return f"the {tag or 'element'}"
        return f"the {self.element.role or 'element'} '{self.element.name}'"

    @property
    def known(self) -> bool:
        return self.facts is not None and self.facts.found


def _is_enter(keys: str) -> bool:
    """Whether a key combination ends in Enter (Enter, Control+Enter and Meta+Enter all submit forms somewhere)."""
    return keys.replace(" ", "").split("+")[-1].casefold() in ("enter", "return")


def _is_space(keys: str) -> bool:
    return keys in (" ", "Space") or keys.casefold() == "space"


def _safe(*reasons: str) -> Classification:
    return Classification(ActionClass.SAFE, reasons)


def _navigation(*reasons: str) -> Classification:
    return Classification(ActionClass.NAVIGATION, reasons)


def _destructive(*reasons: str) -> Classification:
    return Classification(ActionClass.DESTRUCTIVE, reasons)


def _word(label: str, match: Match, kind: str = "commit word") -> str:
    """'the label 'Place order' is a commit word (en)' or '... has the commit word 'remove' (en)'."""
    if match.whole:
        return f"the label '{label}' is a {kind} ({match.lang})"
    return f"the label '{label}' has the {kind} '{match.phrase.text}' ({match.lang})"


class SafetyClassifier:
    """The default ActionClassifier of search: classes safe, navigation, destructive, terminating, with reasons."""

    def __init__(self, config: SafetyConfig | None = None) -> None:
        self.config = config or SafetyConfig()
        self.words = self.config.vocabulary

    def classify(self, action: Action, page: PageView | None, facts: ElementFacts | None = None) -> Classification:
        result = self._classify(action, page, facts)
        log.debug("classify %s -> %s (%s)", action.to_text(), result.action_class.value, "; ".join(result.reasons))
        return result

    def _classify(self, action: Action, page: PageView | None, facts: ElementFacts | None) -> Classification:
        match action:
            case Stop():
                return Classification(ActionClass.TERMINATING, ("ends the task with an answer",))
            case Goto(url=url):
                return self._address(url, "opens")
            case NewTab(url=None):
                return _safe("opens an empty tab")
            case NewTab(url=str() as url):
                return self._address(url, "opens in a new tab")
            case GoBack():
                return _navigation("goes back to the previous page of the tab")
            case GoForward():
                return _navigation("goes forward to the next page of the tab")
            case TabFocus(index=index):
                return _safe(f"switches to tab {index}")
            case CloseTab():
                return _safe("closes the current tab")
            case Scroll(direction=direction):
                return _safe(f"scrolls {direction}: changes only the view")
        target = self._target(action.element_id, page, facts)
        match action:
            case Hover():
                return _safe(f"hovers over {target.what}: at most shows a tooltip or a menu")
            case SelectOption(values=values):
                return _safe(f"picks {', '.join(repr(v) for v in values)} in {target.what}: nothing is sent until "
                             "the form is submitted")
            case Type(press_enter=False):
                return _safe(f"types into {target.what} without submitting it")
            case Type():
                return self._enter(target, typed=True)
            case Press(keys=keys) if _is_enter(keys):
                if action.element_id is None:
                    return _destructive("presses Enter on whatever has focus, which may submit a form")
                return self._enter(target)
            case Press(keys=keys) if _is_space(keys) and action.element_id is not None:
                # Space on a focused button activates it: judged as a click on that element.
                return self._click(target)
            case Press(keys=keys):
                return _safe(f"presses {keys}, which does not submit anything")
            case Click():
                return self._click(target)
        return _destructive(f"'{action.to_text()}' is an action the classifier does not know")

    def _target(self, element_id: int | None, page: PageView | None, facts: ElementFacts | None) -> _Target:
        element = page.elements.get(element_id) if page is not None and element_id is not None else None
        page_url = facts.document_url if facts is not None and facts.document_url else (page.url if page else "")
        return _Target(element, facts, page_url)

    # -----------------------------------------------------------------------------------------------------------------

    def _address(self, url: str, verb: str) -> Classification:
        deletes = self.words.url_deletes(path_of(url))
        if deletes is not None:
            return _destructive(f"{verb} {url}, whose path has the delete word '{deletes.phrase.text}' "
                                f"({deletes.lang}): a GET request can still change things")
        if scheme(url) not in WEB_SCHEMES:
            return _safe(f"{verb} {url}, which is not a web page")
        return _navigation(f"{verb} {url}: loads a page")

    def _click(self, target: _Target) -> Classification:
        facts = target.facts
        if target.element is None and not target.known:
            return _destructive("cannot see the element")
        if facts is None or not facts.found:
            return self._click_unknown(target)
        if facts.disabled:
            return _safe(f"{target.what} is disabled: clicking it does nothing")
        if facts.form is not None and facts.form.submits and facts.type in ("submit", "image"):
            return self._submission(target, facts.form, target.label, target.what)
        if facts.link is not None:
            return self._link(target, facts.link)
        if facts.form is not None and facts.type == "reset":
            return _safe(f"{target.what} resets the form's fields")
        if self._button_like(target):
            return self._script_button(target)
        if facts.form is not None:
            return _safe(f"clicks {target.what}, a field of a form: nothing is sent until the form is submitted")
        commit = self.words.commit(target.label)
        if commit is not None:
            return _destructive(f"clicks {target.what}", _word(target.label, commit))
        return _safe(f"clicks {target.what}, which is not a button or a link")

    def _click_unknown(self, target: _Target) -> Classification:
        """No DOM facts: the link or button cannot be checked, so only the label can clear it (fail safe)."""
        element = target.element
        assert element is not None
        commit = self.words.commit(element.name)
        if element.role == "link":
            link_commit = self.words.commit(element.name, LINK_COMMIT_INTENTS)
            if link_commit is not None:
                return _destructive(f"clicks {target.what}", _word(element.name, link_commit)
                                    + ": a link can still change things")
            return _navigation(f"{target.what} is a link: loads a page (its address could not be read)")
        if element.role in self.config.button_roles:
            if element.props.get("disabled") in _TRUE:
                return _safe(f"{target.what} is disabled: clicking it does nothing")
            reasons = [f"the form of {target.what} is unknown (the page could not be inspected)"]
            if commit is not None:
                reasons.append(_word(element.name, commit))
            return _destructive(*reasons)
        if commit is not None:
            return _destructive(f"clicks {target.what}", _word(element.name, commit))
        return _safe(f"clicks {target.what}, which is not a button or a link")

    def _submission(self, target: _Target, form: FormFacts, label: str, via: str, typed: bool = False,
                    ) -> Classification:
        """`via` (a button, or Enter in a field) submits `form`; `label` is the submitting button's; `typed`: the
        element is typed into first."""
        address = where(form.action, target.page_url)
        commit = self.words.commit(label) if label else None
        invalid = form.invalid_fields + (form.element_invalid and not typed)
        facts = target.facts
        if form.validates and invalid and facts is not None and facts.gated and not facts.ungated_channels:
            # The browser refuses to send it; a script that sends anyway is held by the gate like any other request.
            fields = "1 of its fields is" if invalid == 1 else f"{invalid} of its fields are"
            return _safe(f"{via} submits a {form.method.upper()} form to {address}, but {fields} required and empty "
                         "or invalid: the browser will not send it", "it runs under the network gate, which holds "
                         "any request the page sends instead and asks first")
        if form.method == "post":
            reasons = [f"{via} submits a POST form to {address}"]
            if commit is not None:
                reasons.append(_word(label, commit))
            # The submission's method and address are known: approving the action lets exactly that request through.
            sends = (ExpectedRequest.of("POST", form.action),) if scheme(form.action) in WEB_SCHEMES else ()
            return Classification(ActionClass.DESTRUCTIVE, tuple(reasons), sends)
        if form.method == "dialog":
            if commit is not None:
                return _destructive(f"{via} closes a dialog form", _word(label, commit)
                                    + ": the page's script acts on the answer")
            return _safe(f"{via} only closes a dialog (form method dialog)")
        link_commit = self.words.commit(label, LINK_COMMIT_INTENTS) if label else None
        if link_commit is not None:
            return _destructive(f"{via} submits a GET form to {address}",
                                _word(label, link_commit) + ": a GET request can still change things")
        deletes = self.words.url_deletes(path_of(form.action))
        if deletes is not None:
            return _destructive(f"{via} submits a GET form to {address}, whose path has the delete word "
                                f"'{deletes.phrase.text}' ({deletes.lang})")
        return _navigation(f"{via} submits a GET form to {address}: loads a page (a search or a filter)")

    def _link(self, target: _Target, link: LinkFacts) -> Classification:
        raw = link.raw_href.strip()
        if raw in ("", "#") or raw.casefold().startswith("javascript:"):
            return self._script_button(target, kind=f"a link that runs a script (href '{raw}')")
        if scheme(link.href) not in WEB_SCHEMES:
            return _safe(f"{target.what} opens {link.href}, which is not a web page")
        commit = self.words.commit(target.label, LINK_COMMIT_INTENTS)
        address = where(link.href, target.page_url)
        writes = self.words.only_writes(target.label) if commit is not None else None
        if writes is not None and self.words.url_deletes(path_of(link.href)) is None:
            return _navigation(f"{target.what} links to {address}",
                               _word(target.label, writes, "word naming what one writes")
                               + ": the link opens the form where it is written; nothing is sent until that is "
                                 "submitted")
        if commit is not None:
            return _destructive(f"{target.what} links to {address}",
                                _word(target.label, commit) + ": a GET link can still change things")
        deletes = self.words.url_deletes(path_of(link.href))
        if deletes is not None:
            return _destructive(f"{target.what} links to {address}, whose path has the delete word "
                                f"'{deletes.phrase.text}' ({deletes.lang}): a GET link can still change things")
        anchor = anchor_on_page(link.href, target.page_url)
        if anchor is not None:
            return _navigation(f"{target.what} jumps to {anchor} on this page")
        tab = " in a new tab" if link.target == "_blank" else ""
        site = "the same site" if same_site(link.href, target.page_url) else "another site"
        return _navigation(f"{target.what} is a link to {address} on {site}: navigation{tab}")

    def _button_like(self, target: _Target) -> bool:
        facts, element = target.facts, target.element
        assert facts is not None
        return (
            facts.tag == "button"
            or (facts.tag == "input" and facts.type in ("button", "submit", "image"))
            or facts.role in (*self.config.button_roles, "link")
            or (element is not None and element.role in (*self.config.button_roles, "link"))
            or any(handler in self.config.click_handlers for handler in facts.inline_handlers)
        )

    def _script_button(self, target: _Target, kind: str = "") -> Classification:
        """A control whose effect only its script knows: a button outside a form that it submits, a '#' link."""
        facts, element, label = target.facts, target.element, target.label
        assert facts is not None
        if not kind and facts.link is None and "link" in (facts.role, element.role if element else ""):
            kind = "a link without an address"
        where_it_is = kind or ("a button that does not submit its form" if facts.form is not None
                               else "a button outside any form")
        what = f"{target.what} is {where_it_is}: its script decides what it does"
        # The network gate holds every mutating request the tab can send: the click can run and the gate asks about
        # what it really sends, unless the page has a channel open that the gate cannot hold.
        covered = facts.gated and not facts.ungated_channels
        commit = self.words.commit(label)
        if commit is not None and not (covered and commit.intent in NAMES_NO_CHANGE):
            return _destructive(what, _word(label, commit))
        if element is not None and self.words.dismisses(label) and self._in_dialog(element):
            return _safe(f"{target.what} in a dialog only closes it")
        exception = self.words.exception(label)
        if exception is not None:
            if exception.intent is Intent.NAVIGATION:
                return _navigation(f"{target.what} is {where_it_is}", _word(label, exception, "navigation word"))
            return _safe(f"{target.what} is {where_it_is}", _word(label, exception, "word that only changes the view"))
        if element is not None:
            if any(element.props.get(name, "") not in _FALSE for name in self.config.popup_props):
                return _safe(f"{target.what} opens a popup")
            if "expanded" in element.props:
                return _safe(f"{target.what} only expands or collapses a section")
        if covered:
            named = [_word(label, commit, "word that names no change of its own")] if commit is not None else []
            return _safe(what, *named, "it runs under the network gate, which holds any request it sends and asks "
                                       "first")
        if facts.gated:
            return _destructive(what, f"the page has {', '.join(facts.ungated_channels)} open, which the network gate "
                                      "cannot hold: its script may send data there")
        return _destructive(f"{target.what} is {where_it_is}, and its label names no navigation: its script may "
                            "send data")

    def _enter(self, target: _Target, typed: bool = False) -> Classification:
        """Enter in the element; `typed`: after typing into it (its own emptiness no longer counts)."""
        facts, element = target.facts, target.element
        via = f"Enter in {target.what}"
        if element is None and not target.known:
            return _destructive("cannot see the field Enter is pressed in")
        if facts is None or not facts.found:
            return _destructive(f"{via} may submit its form, and the page could not be inspected to tell")
        if facts.tag in ("button", "a") or facts.link is not None or (
                facts.tag == "input" and facts.type in ("submit", "image", "button", "reset")):
            # Enter on a focused button or link activates it, exactly like a click.
            return self._click(target)
        if facts.form is not None and facts.form.submits:
            return self._submission(target, facts.form, facts.form.submitter_label, via, typed)
        if self._search_field(target):
            return _navigation(f"{via}, a search field outside a form that Enter submits: a search")
        if facts.form is not None:
            return _destructive(f"{via}: Enter does not submit its form by itself, but the page's script may")
        return _destructive(f"{via}, outside any form: the page's script may send it (as chats do)")

    def _search_field(self, target: _Target) -> bool:
        facts, element = target.facts, target.element
        if facts is not None and facts.type == "search":
            return True
        if element is not None and element.role in self.config.search_roles:
            return True
        exception = self.words.exception(target.label)
        return exception is not None and exception.intent is Intent.NAVIGATION

    def _in_dialog(self, element: ElementInfo) -> bool:
        return any(step.role in self.config.dialog_roles for step in element.locator.ancestors)
