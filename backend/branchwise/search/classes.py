"""Action classes and the classifier interface: what search may run freely, what needs the user, what ends the run."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from ..actions import Action
from ..observation import PageView


class ActionClass(str, Enum):
    SAFE = "safe"
    DESTRUCTIVE = "destructive"
    TERMINATING = "terminating"

    @property
    def priority(self) -> int:
        """WebOperator's priority classes: safe 3 > destructive 2 > terminating 1."""
        return {ActionClass.SAFE: 3, ActionClass.DESTRUCTIVE: 2, ActionClass.TERMINATING: 1}[self]


@dataclass(frozen=True)
class Classification:
    action_class: ActionClass
    reasons: tuple[str, ...] = ()


class ActionClassifier(Protocol):
    """Classifies an action before it runs, from the page it would run on (the safety issue replaces the heuristic)."""

    def classify(self, action: Action, page: PageView | None) -> Classification: ...
