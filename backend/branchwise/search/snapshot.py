"""Is a replayed page still the page the stored action was chosen on? (WebOperator, Appendix E.)

Speculative backtracking replays stored actions in a new tab, where element ids differ (they are backendDOMNodeIds),
so elements are matched by locator and then checked semantically before each step:

- Targeted actions check the *pivotal node* (the element the next action acts on):
  1. it is found in the live page by its locator;
  2. same role, exactly the same name (the locator tolerates "Cart (2)" -> "Cart (3)", this check must not), same
     value unless either side is redacted, and the same STATE_PROPS;
  3. same neighbourhood: the role+name chain of its ancestors, its descendants (relative depth, role, name, value)
     and the children of every ancestor (role+name, in order; this includes its siblings).
- Untargeted actions (scroll, go_back, press without element, ...) compare the whole page: URL without fragment and
  `outline` (every line without its id). Any drift aborts: the replay must stop rather than guess.

Every check reports a human-readable reason, so a failed backtrack can be explained in the run log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import NamedTuple, TypeVar
from urllib.parse import urldefrag

from ..actions import Action, Click, Hover, Press, SelectOption, Type
from ..agent.env import BrowserEnv, EnvView
from ..observation import ElementInfo, PageView
from ..observation.render import quote

log = logging.getLogger(__name__)

# States of the pivotal node that change what the action does (`url` is a link's target: same label, other page).
# Deliberately left out: `focused` (a background tab focuses nothing; focus is not what an action needs), `invalid`
# (validation styling flips on blur and timing, not on what the element is) and `level` (a heading's level does not
# change what acting on it does).
STATE_PROPS = (
    "disabled", "readonly", "required", "checked", "pressed", "selected", "expanded", "multiselectable", "modal",
    "editable", "hasPopup", "url",
)
# Absent means false for these: CDP only reports `disabled: true`, never `disabled: false`.
_FALSE_WHEN_ABSENT = frozenset({"disabled", "readonly", "required", "multiselectable", "modal"})
# Never part of a page's outline: focus moves without the page changing.
_VOLATILE_PROPS = frozenset({"focused"})


def _volatile(element: ElementInfo, name: str) -> bool:
    """A state that changes without the page changing: focus, and whether a native <select> shows its options. A
    click opens Chromium's own popup for one (a combobox whose popup is a `menu`) in a visible tab and never in a
    background one, so a replay sees it closed where the run saw it open (1008 under action_aware aborted on it)."""
    return name in _VOLATILE_PROPS or (name == "expanded" and element.role == "combobox"
                                       and element.props.get("hasPopup") == "menu")


# Actions whose element_id is a field; the others have an element_id property that is always None.
_TARGETED = (Click, Hover, Type, Press, SelectOption)

_T = TypeVar("_T", bound=Hashable)


@dataclass(frozen=True, slots=True)
class SnapshotMatch:
    """The verdict of one comparison; `reason` says what differed (empty on a match)."""

    ok: bool
    reason: str = ""


class OutlineLine(NamedTuple):
    """One element of a page without its id: what must survive a reload or a replay."""

    depth: int
    role: str
    name: str
    value: str
    props: tuple[tuple[str, str], ...]


def without_fragment(url: str) -> str:
    """The URL without `#...`: in-page anchors do not make a different page."""
    return urldefrag(url).url


def outline(page: PageView) -> tuple[OutlineLine, ...]:
    """The page in document order without element ids, so a renumbered capture of the same page compares equal.

    Values are included (masked ones as the mask, so secrets never matter) because typed text is state a replay must
    reproduce. The document's own `url` property is left out: `same_page` compares URLs without the fragment.
    """
    lines = []
    for element in page.elements.values():
        is_document = element.parent is None
        props = tuple(sorted(
            (name, text) for name, text in element.props.items()
            if not _volatile(element, name) and not (is_document and name == "url")
        ))
        lines.append(OutlineLine(element.depth, element.role, element.name, element.value, props))
    return tuple(lines)


# What differs between two observations of the same state: element ids (new on every load), focus, and the header's
# URL line (the URL is compared without its fragment).
_VOLATILE_TEXT = re.compile(r"\[\d+\] | focused: True\b|^URL: .*$", re.M)
# Whether a combobox is open: `_volatile` ignores it for a native <select> only, but the text does not say which kind
# of popup a combobox has, so here it is ignored for every combobox. A scripted one that opens shows its options as
# lines of their own, which still count; one whose popup shows none (loaded later, a dialog) keys alike open or shut.
_COMBOBOX_EXPANDED = re.compile(r"^(\s*\[\d+\] combobox .*?) expanded: (?:True|False)\b", re.M)


def state_key(url: str, text: str) -> str:
    """A digest of the state a node shows, equal for the same page reached twice (A -> C -> A). Read off the
    observation text rather than `outline`: 15 ms instead of 75 ms on a 5,500-element page (tests/fixtures/axtree)."""
    text = _VOLATILE_TEXT.sub("", _COMBOBOX_EXPANDED.sub(r"\1", text))
    return hashlib.sha1(f"{without_fragment(url)}\n{text}".encode()).hexdigest()


# When a page is read after the browser was out of reach (a crash, a worker restart): it counts as loaded once two looks
# this far apart agree, or after the maximum.
SETTLE_QUIET_S, SETTLE_MAX_S = 0.5, 10.0


async def settled_view(env: BrowserEnv, quiet_s: float = SETTLE_QUIET_S, max_s: float = SETTLE_MAX_S) -> EnvView:
    """The tab's page once two looks `quiet_s` apart show the same state (an answer held up while the browser was out
    of reach may still be loading it), or as it is after `max_s`."""
    view = await env.observe()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_s
    while loop.time() < deadline:
        await asyncio.sleep(quiet_s)
        again = await env.observe()
        if state_key(again.url, again.text) == state_key(view.url, view.text):
            return again
        view = again
    return view


def same_page(a: PageView, b: PageView) -> bool:
    """The same observation up to element ids and the URL fragment (the checkpoint rule's "unchanged under reload")."""
    return without_fragment(a.url) == without_fragment(b.url) and outline(a) == outline(b)


def compare_snapshot(
    stored: PageView, stored_element_id: int | None, live: PageView,
) -> tuple[SnapshotMatch, int | None]:
    """Compare the live page with the stored snapshot before replaying the action on `stored_element_id`.

    Returns the verdict and, on a match of a targeted action, the live id of the pivotal node (None otherwise).
    """
    if stored_element_id is None:
        return _compare_pages(stored, live), None
    element = stored.elements.get(stored_element_id)
    if element is None:
        log.warning("element [%d] is not on the stored page of %s", stored_element_id, stored.url)
        return SnapshotMatch(False, f"element [{stored_element_id}] is not on the stored page"), None
    live_id = live.find(element.locator)
    if live_id is None:
        return SnapshotMatch(False, f"{_describe(element)} is gone"), None
    twin = live.elements[live_id]
    reason = (
        _node_difference(element, twin)
        or _ancestor_difference(stored, element, live, twin)
        or _descendant_difference(stored, element, live, twin)
        or _neighbour_difference(stored, element, live, twin)
    )
    if reason:
        return SnapshotMatch(False, reason), None
    return SnapshotMatch(True), live_id


def retarget(action: Action, stored: PageView, live: PageView) -> Action | None:
    """`action` with its element id replaced by the live id of the same element, or None when it cannot be found.

    Only the locator is used here; `compare_snapshot` is what decides whether the element is still the same.
    """
    if action.element_id is None:
        return action
    if not isinstance(action, _TARGETED):
        raise TypeError(f"retarget does not know how to move {type(action).__name__} to another element")
    element = stored.elements.get(action.element_id)
    if element is None:
        return None
    live_id = live.find(element.locator)
    if live_id is None:
        return None
    return dataclasses.replace(action, element_id=live_id)


# ---------------------------------------------------------------------------------------------------------------------


def _describe(element: ElementInfo) -> str:
    return f"the {element.role} {quote(element.name)}"


def _role_name(role: str, name: str) -> str:
    return f"{role} {quote(name)}"


def _compare_pages(stored: PageView, live: PageView) -> SnapshotMatch:
    if without_fragment(stored.url) != without_fragment(live.url):
        return SnapshotMatch(False, f"the URL changed: {stored.url} -> {live.url}")
    before, after = outline(stored), outline(live)
    if before == after:
        return SnapshotMatch(True)
    change = _first_change(before, after, _line_text)
    return SnapshotMatch(False, f"the page changed: {change}")


def _line_text(line: OutlineLine) -> str:
    text = _role_name(line.role, line.name)
    if line.value:
        text += f" value: {quote(line.value)}"
    return text + "".join(f" {name}: {value}" for name, value in line.props)


def _state(element: ElementInfo, name: str) -> str | None:
    if _volatile(element, name):
        return None
    value = element.props.get(name)
    if value is None and name in _FALSE_WHEN_ABSENT:
        return "False"
    return value


def _node_difference(stored: ElementInfo, live: ElementInfo) -> str:
    if stored.role != live.role:
        return f"role changed: {stored.role} -> {live.role} ({quote(stored.name)})"
    if stored.name != live.name:
        return f"label changed: {quote(stored.name)} -> {quote(live.name)}"
    if not (stored.redacted or live.redacted) and stored.value != live.value:
        return f"value of {_describe(stored)} changed: {quote(stored.value)} -> {quote(live.value)}"
    for name in STATE_PROPS:
        before, after = _state(stored, name), _state(live, name)
        if before != after:
            return f"{_describe(stored)} changed state: {name} {before} -> {after}"
    return ""


def _ancestors(page: PageView, element: ElementInfo) -> list[ElementInfo]:
    """Ancestors from the parent up to the document."""
    chain = []
    parent = element.parent
    while parent is not None:
        ancestor = page.elements[parent]
        chain.append(ancestor)
        parent = ancestor.parent
    return chain


class _Signature(NamedTuple):
    """What a neighbour or ancestor must keep for the pivotal node to be in the same place: role, label, value (masked
    values count as equal) and the STATE_PROPS (a sibling checkbox that is checked now, a menu that is collapsed)."""

    role: str
    name: str
    value: str
    states: tuple[tuple[str, str | None], ...]

    def describe(self) -> str:
        text = _role_name(self.role, self.name)
        if self.value:
            text += f" value: {quote(self.value)}"
        return text + "".join(f" {name}: {value}" for name, value in self.states if value not in (None, "False"))


def _signature(element: ElementInfo) -> _Signature:
    return _Signature(element.role, element.name, "" if element.redacted else element.value,
                      tuple((name, _state(element, name)) for name in STATE_PROPS))


def _ancestor_difference(stored: PageView, element: ElementInfo, live: PageView, twin: ElementInfo) -> str:
    before = [_signature(a) for a in reversed(_ancestors(stored, element))]
    after = [_signature(a) for a in reversed(_ancestors(live, twin))]
    if before == after:
        return ""
    change = _first_change(before, after, _Signature.describe)
    return f"an ancestor of {_describe(element)} changed: {change}"


def _descendants(page: PageView, element: ElementInfo) -> list[tuple[int, str, str, str]]:
    """(relative depth, role, name, value) of the subtree in document order; masked values count as equal."""
    return [(node.depth - element.depth, node.role, node.name, "" if node.redacted else node.value)
            for node in page.descendants(element)]


def _descendant_difference(stored: PageView, element: ElementInfo, live: PageView, twin: ElementInfo) -> str:
    before, after = _descendants(stored, element), _descendants(live, twin)
    if before == after:
        return ""

    def show(row: tuple[int, str, str, str]) -> str:
        text = _role_name(row[1], row[2])
        return text + (f" value: {quote(row[3])}" if row[3] else "")

    return f"a descendant of {_describe(element)} changed: {_first_change(before, after, show)}"


def _neighbour_difference(stored: PageView, element: ElementInfo, live: PageView, twin: ElementInfo) -> str:
    """Children of every ancestor, by role, name, value and states, in order; the chains are equal when this runs."""
    for before, after in zip(_ancestors(stored, element), _ancestors(live, twin), strict=True):
        old = [_signature(stored.elements[c]) for c in before.children]
        new = [_signature(live.elements[c]) for c in after.children]
        if old != new:
            change = _first_change(old, new, _Signature.describe)
            return f"a neighbour changed under {_describe(before)}: {change}"
    return ""


def _first_change(before: Sequence[_T], after: Sequence[_T], show: Callable[[_T], str]) -> str:
    """The first edit turning `before` into `after`, in words."""
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, _i2, j1, _j2 in matcher.get_opcodes():
        if tag == "replace":
            return f"{show(before[i1])} -> {show(after[j1])}"
        if tag == "delete":
            return f"{show(before[i1])} is gone"
        if tag == "insert":
            return f"{show(after[j1])} appeared"
    return "the order changed"
