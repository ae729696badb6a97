"""The mistakes a model makes in its answers, counted per role: small models make many (an element id the page does
not have, a reply with no action in it, two actions in one, a verdict that says nothing readable). Each is fed back
to the model where it can correct itself; the counts end a run's report and the eval report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from .status import Role

MistakeKind = Literal["unparseable", "unknown_element", "inert_click", "invalid_action", "several_actions",
                      "unreadable_verdict", "ungrounded_answer", "retargeted"]
# What each kind is called in reports.
MISTAKE_NAMES: dict[MistakeKind, str] = {
    "unparseable": "answers with no valid action",
    "unknown_element": "element ids not on the page",
    "inert_click": "clicks on a line that is not a control",
    "invalid_action": "actions that could not be done",
    "several_actions": "answers with several actions (the first taken)",
    "unreadable_verdict": "unreadable verdicts",
    "ungrounded_answer": "answers with a number no page on the way showed",
    "retargeted": "actions moved onto the one field or control inside the element named",
}
# Per role, per kind: how many.
MistakeCounts = dict[Role, dict[MistakeKind, int]]


def describe_mistakes(counts: Mapping[MistakeKind, int]) -> str:
    """`answers with no valid action: 3, element ids not on the page: 1`; empty when there are none."""
    return ", ".join(f"{MISTAKE_NAMES[kind]}: {count}" for kind, count in counts.items() if count)
