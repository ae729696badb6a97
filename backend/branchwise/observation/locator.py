"""Locators: how to find "the same element" in another tab, after a reload or a few steps later, without raw ids.

A locator is the element's role and name, its occurrence index among elements with the same role and name (document
order, counting only elements that have an id), its ancestors with a context role (landmarks, dialogs, iframes,
headings; outermost first, whether or not they are printed) and the name of the nearest heading before it.

`find` tries these rules in order and returns the first that gives exactly one element:
1. exact: role, name, occurrence, ancestors and heading all equal;
2. same role and name, same ancestors and heading (content was added or removed elsewhere, shifting the occurrence);
3. same role and name, and it is the only one on the page;
4. same role and name, same ancestors (its section heading changed);
5. same role and name, same heading (the landmarks around it changed);
6. same role, same ancestors, same name once case, digits and punctuation are ignored ("Cart (2)" -> "Cart (3)").
Anything else, including several equally good candidates, gives None: replay must stop rather than guess, and the
snapshot comparison after `find` still checks the neighbourhood.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# Roles that name a region of the page; an element's chain of these is its address on the page.
CONTEXT_ROLES = frozenset({
    "banner", "navigation", "main", "contentinfo", "complementary", "region", "search", "form", "dialog",
    "alertdialog", "Iframe", "heading",
})

_LOOSE_DROP = re.compile(r"[\d\W_]+")


@dataclass(frozen=True, slots=True)
class LocatorStep:
    role: str
    name: str


@dataclass(frozen=True, slots=True)
class Locator:
    """Serialisable with pydantic.TypeAdapter(Locator) like any dataclass."""

    role: str
    name: str
    occurrence: int
    ancestors: tuple[LocatorStep, ...] = ()
    heading: str | None = None


def loose_name(name: str) -> str:
    return _LOOSE_DROP.sub(" ", name.casefold()).strip()


@dataclass(frozen=True, slots=True)
class LocatorIndex:
    """Locators of one page plus the lookup `find` needs."""

    locators: Mapping[int, Locator]
    by_role_name: Mapping[tuple[str, str], Sequence[int]]
    by_role: Mapping[str, Sequence[int]]


def build_index(ordered: Sequence[tuple[int, str, str, tuple[LocatorStep, ...], str | None]]) -> LocatorIndex:
    """Locators for (id, role, name, ancestors, heading) rows given in document order."""
    locators: dict[int, Locator] = {}
    by_role_name: dict[tuple[str, str], list[int]] = {}
    by_role: dict[str, list[int]] = {}
    for element_id, role, name, ancestors, heading in ordered:
        same = by_role_name.setdefault((role, name), [])
        locators[element_id] = Locator(role, name, len(same), ancestors, heading)
        same.append(element_id)
        by_role.setdefault(role, []).append(element_id)
    return LocatorIndex(locators, by_role_name, by_role)


def _only(candidates: Sequence[int], keep: Callable[[Locator], bool], locators: Mapping[int, Locator]) -> int | None:
    found = [c for c in candidates if keep(locators[c])]
    return found[0] if len(found) == 1 else None


def find(locator: Locator, index: LocatorIndex) -> int | None:
    locs = index.locators
    same = index.by_role_name.get((locator.role, locator.name), ())
    if locator.occurrence < len(same):
        candidate = locs[same[locator.occurrence]]
        if candidate.ancestors == locator.ancestors and candidate.heading == locator.heading:
            return same[locator.occurrence]
    rules: tuple[Callable[[Locator], bool], ...] = (
        lambda c: c.ancestors == locator.ancestors and c.heading == locator.heading,
        lambda c: True,
        lambda c: c.ancestors == locator.ancestors,
        lambda c: c.heading == locator.heading,
    )
    for rule in rules:
        found = _only(same, rule, locs)
        if found is not None:
            return found
    wanted = loose_name(locator.name)
    if not wanted:
        return None
    return _only(
        index.by_role.get(locator.role, ()),
        lambda c: c.ancestors == locator.ancestors and loose_name(c.name) == wanted,
        locs,
    )
