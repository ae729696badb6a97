"""Action classes and the classifier interface: what search may run freely, what needs the user, what ends the run."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from ..actions import Action
from ..observation import PageView
from ..protocol import ElementFacts
from .requests import ExpectedRequest


class ActionClass(str, Enum):
    SAFE = "safe"
    # Loads another page without changing anything on a server (a link, a GET form): search treats it as safe; the
    # class only tells the user why an action runs freely.
    NAVIGATION = "navigation"
    DESTRUCTIVE = "destructive"
    TERMINATING = "terminating"

    @property
    def runs_freely(self) -> bool:
        """Whether search may run and undo the action without asking: safe and navigation alike."""
        return self in (ActionClass.SAFE, ActionClass.NAVIGATION)

    @property
    def selection_class(self) -> ActionClass:
        """The class the selection policy (WebOperator's three classes) sees: navigation counts as safe."""
        return ActionClass.SAFE if self.runs_freely else self

    @property
    def priority(self) -> int:
        """WebOperator's priority classes: safe (and navigation) 3 > destructive 2 > terminating 1."""
        return {ActionClass.SAFE: 3, ActionClass.DESTRUCTIVE: 2, ActionClass.TERMINATING: 1}[self.selection_class]


@dataclass(frozen=True)
class Classification:
    action_class: ActionClass
    reasons: tuple[str, ...] = ()
    # What the action will send, when the DOM says so (a POST form's submission): all that approving it lets through
    # the network gate. Empty when that cannot be known (a script's button, no DOM facts): then every mutating request
    # the approved action makes is held and asked about.
    sends: tuple[ExpectedRequest, ...] = ()


class ActionClassifier(Protocol):
    """Classifies an action before it runs, from the page it would run on and, when the page could be inspected, the
    DOM facts of the element it targets (its form and method, its link target)."""

    def classify(self, action: Action, page: PageView | None, facts: ElementFacts | None = None) -> Classification: ...
