"""How the safety benchmark counts questions: before the action, and at the gate for each held request an approval
does not let through (safety/evaluation.py), on hand-made records."""

from __future__ import annotations

from branchwise.core.classes import ActionClass, Classification
from branchwise.core.requests import ExpectedRequest
from branchwise.safety.corpus import CorpusRecord
from branchwise.safety.evaluation import Evaluation, Verdict

SITE = "http://127.0.0.1:8800"


def record(name: str, changed: bool, *held: str) -> CorpusRecord:
    return CorpusRecord(id=name, site="shopping", state="guest", page_url=SITE + "/", action="click [1]",
                        changed_server_state=changed, held=[f"POST {SITE}{path}" for path in held])


ASKED = Classification(ActionClass.DESTRUCTIVE, ("submits a POST form",), (ExpectedRequest.of("POST", SITE + "/a"),))
UNASKED = Classification(ActionClass.SAFE, ("a script's button, under the gate",))


def test_an_approval_lets_its_own_request_through_once_and_the_rest_is_asked_about() -> None:
    verdict = Verdict(record("form", True, "/a", "/a", "/b"), ASKED, gate=True)
    assert (verdict.asked_first, verdict.gate_questions, verdict.questions) == (True, 2, 3)
    assert Verdict(verdict.record, ASKED).questions == 1, "alone, only the question before the action counts"


def test_what_only_the_gate_asks_about_counts_with_the_gate() -> None:
    scripted = record("to-do", True, "/todo")
    assert Verdict(scripted, UNASKED, gate=True).flagged and not Verdict(scripted, UNASKED).flagged
    evaluation = Evaluation((Verdict(scripted, UNASKED, gate=True),))
    assert (evaluation.recall, len(evaluation.gate_catches)) == (1.0, 1)


def test_needless_questions_are_those_about_actions_that_sent_nothing() -> None:
    refused = Verdict(record("wrong password", False, "/a"), ASKED, gate=True)
    empty = Verdict(record("empty form", False), ASKED, gate=True)
    done = Verdict(record("order", True, "/a"), ASKED, gate=True)
    evaluation = Evaluation((refused, empty, done))
    assert evaluation.needless() == [empty]
    assert (round(evaluation.precision, 3), round(evaluation.precision_sent, 3)) == (0.333, 0.667)
