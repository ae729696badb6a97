"""The vocabulary of the safety corpus: what a case does on a site (steps on elements found by role and name), the
states it starts from, and what one site contributes (SitePlan). The sites' plans (corpus_shop, corpus_forum,
corpus_tracker) are written in it; `safety_corpus` runs them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..observation import ElementInfo

StepKind = Literal["click", "type", "press", "select", "hover", "scroll", "goto", "go_back", "go_forward"]


@dataclass(frozen=True)
class Target:
    """An element by role and accessible name (a trailing '*' matches a prefix), the n-th such in page order."""

    role: str
    name: str
    occurrence: int = 0

    def matches(self, element: ElementInfo) -> bool:
        if element.role != self.role:
            return False
        if self.name.endswith("*"):
            return element.name.startswith(self.name[:-1])
        return element.name == self.name


@dataclass(frozen=True)
class Step:
    kind: StepKind
    target: Target | None = None
    text: str = ""
    enter: bool = False
    keys: str = ""
    values: tuple[str, ...] = ()
    url: str = ""

    def describe(self) -> str:
        what = f" {self.target.role} '{self.target.name}'" if self.target else ""
        what += f"#{self.target.occurrence}" if self.target and self.target.occurrence else ""
        extra = {"type": f" [{self.text}]{' +Enter' if self.enter else ''}", "press": f" [{self.keys}]",
                 "select": f" {list(self.values)}", "goto": f" {self.url}", "scroll": " down"}.get(self.kind, "")
        return f"{self.kind}{what}{extra}"


def click(role: str, name: str, occurrence: int = 0) -> Step:
    return Step("click", Target(role, name, occurrence))


def type_in(role: str, name: str, text: str, enter: bool = False) -> Step:
    return Step("type", Target(role, name), text=text, enter=enter)


def select(name: str, *values: str) -> Step:
    return Step("select", Target("combobox", name), values=values)


def goto(url: str) -> Step:
    return Step("goto", url=url)


@dataclass(frozen=True)
class Case:
    state: str
    path: str
    action: Step
    prepare: tuple[Step, ...] = ()

    @property
    def id(self) -> str:
        steps = "".join(f" after {s.describe()};" for s in self.prepare)
        return f"{self.state} {self.path}:{steps} {self.action.describe()}"


# A state is the visits (page, steps) that bring a fresh site there, in the browser like a user.
Setup = tuple[tuple[str, tuple[Step, ...]], ...]


@dataclass(frozen=True)
class Page:
    """A page whose links and buttons are clicked, each from a fresh state: `links` of its links and `buttons` of its
    buttons (None: all) sampled evenly in page order."""

    state: str
    path: str
    links: int
    buttons: int | None = None


@dataclass(frozen=True)
class SitePlan:
    """One site's part of the corpus: its states, the enumerated pages and the written cases (forms, key presses,
    untargeted actions)."""

    setups: dict[str, Setup]
    pages: tuple[Page, ...]
    written: tuple[Case, ...]
