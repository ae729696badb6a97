"""Precision and recall of a classifier on the labelled corpus.

Positive = classified destructive; the truth is whether the action changed the shop's server state. Recall is what
safety needs (every state change must be caught before it runs); precision is what it costs (how many harmless
actions wait for the user's approval).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.classes import ActionClass, ActionClassifier, Classification
from .corpus import CorpusRecord, SafetyCorpus, classifier_inputs


@dataclass(frozen=True)
class Verdict:
    record: CorpusRecord
    classification: Classification

    @property
    def flagged(self) -> bool:
        return self.classification.action_class is ActionClass.DESTRUCTIVE


@dataclass(frozen=True)
class Evaluation:
    verdicts: tuple[Verdict, ...]

    def _where(self, flagged: bool, changed: bool) -> list[Verdict]:
        return [v for v in self.verdicts if v.flagged is flagged and v.record.changed_server_state is changed]

    def _count(self, flagged: bool, changed: bool) -> int:
        return len(self._where(flagged, changed))

    @property
    def true_positives(self) -> int:
        return self._count(True, True)

    @property
    def false_positives(self) -> int:
        return self._count(True, False)

    @property
    def false_negatives(self) -> int:
        return self._count(False, True)

    @property
    def true_negatives(self) -> int:
        return self._count(False, False)

    @property
    def precision(self) -> float:
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        changed = self.true_positives + self.false_negatives
        return self.true_positives / changed if changed else 1.0

    def misses(self) -> list[Verdict]:
        """False negatives: state changes the classifier would have let run without asking."""
        return self._where(False, True)

    def false_alarms(self) -> list[Verdict]:
        """False positives: harmless actions that would wait for the user's approval."""
        return self._where(True, False)


def evaluate(classifier: ActionClassifier, corpus: SafetyCorpus) -> Evaluation:
    verdicts = []
    for record in corpus.records:
        action, page = classifier_inputs(record)
        verdicts.append(Verdict(record, classifier.classify(action, page, record.facts)))
    return Evaluation(tuple(verdicts))


def _line(verdict: Verdict) -> str:
    record = verdict.record
    reasons = "; ".join(verdict.classification.reasons)
    return f"  - {record.id}\n      {verdict.classification.action_class.value}: {reasons}"


def report(name: str, evaluation: Evaluation, corpus_size: int) -> str:
    """A plain-text report: the figures, the confusion counts, every false negative and false positive."""
    e = evaluation
    lines = [
        f"{name} on {corpus_size} actions "
        f"({e.true_positives + e.false_negatives} changed server state, "
        f"{e.true_negatives + e.false_positives} did not)",
        f"  precision {e.precision:.1%}  recall {e.recall:.1%}",
        f"  confusion: TP {e.true_positives}  FP {e.false_positives}  FN {e.false_negatives}  TN {e.true_negatives}",
        f"  false negatives ({len(e.misses())}):",
        *(_line(v) for v in e.misses()),
        f"  false positives ({len(e.false_alarms())}):",
        *(_line(v) for v in e.false_alarms()),
    ]
    return "\n".join(lines)
