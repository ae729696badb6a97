"""The post-execution check: what an action really sent confirms, refutes or contradicts the class it was given."""

from __future__ import annotations

import pytest

from branchwise.core.classes import ActionClass
from branchwise.core.requests import GatedRequest
from branchwise.safety.postcheck import post_check

BUY = GatedRequest("POST", "http://shop.test/buy", "allowed")
RELEASED = GatedRequest("POST", "http://shop.test/newsletter", "released")
REFUSED = GatedRequest("DELETE", "http://shop.test/cart/3", "failed")


def test_destructive_action_that_sent_a_mutating_request_is_confirmed() -> None:
    check = post_check(ActionClass.DESTRUCTIVE, [BUY])
    assert (check.verdict, check.effective_class, check.sent, check.refused) == (
        "confirmed", ActionClass.DESTRUCTIVE, (BUY,), ())
    assert check.recorded and check.reroots(ran_ok=True)
    assert "POST http://shop.test/buy (covered by the approval)" in check.note


def test_an_approved_action_whose_request_was_asked_about_and_released_is_confirmed() -> None:
    # Its requests were not known beforehand (a script sends them): each was held, and the user let this one go; the
    # surprise it also tried was refused.
    check = post_check(ActionClass.DESTRUCTIVE, [RELEASED, REFUSED])
    assert (check.verdict, check.sent, check.refused) == ("confirmed", (RELEASED,), (REFUSED,))
    assert check.reroots(ran_ok=True)


def test_destructive_action_that_sent_nothing_is_refuted_but_stays_destructive() -> None:
    check = post_check(ActionClass.DESTRUCTIVE, [])
    assert (check.verdict, check.effective_class) == ("refuted", ActionClass.DESTRUCTIVE)
    assert check.recorded
    # Conservative: the gate cannot see every way a site changes, so the result is still the new root.
    assert check.reroots(ran_ok=True)
    # An action that failed and sent nothing changed nothing, as before.
    assert not check.reroots(ran_ok=False)
    assert "still treated as destructive" in check.note


@pytest.mark.parametrize("action_class", [ActionClass.SAFE, ActionClass.NAVIGATION])
def test_a_free_action_that_got_a_request_out_was_misclassified(action_class: ActionClass) -> None:
    check = post_check(action_class, [RELEASED])
    assert (check.verdict, check.action_class, check.effective_class) == (
        "contradicted", action_class, ActionClass.DESTRUCTIVE)
    assert check.recorded
    # The site changed even when the action then reported a failure.
    assert check.reroots(ran_ok=True) and check.reroots(ran_ok=False)
    assert f"classified {action_class.value}, yet it sent POST http://shop.test/newsletter (released at the gate)" \
        in check.note


def test_a_free_action_whose_requests_were_all_failed_changed_nothing() -> None:
    check = post_check(ActionClass.SAFE, [REFUSED])
    assert (check.verdict, check.effective_class, check.sent, check.refused) == (
        "contradicted", ActionClass.SAFE, (), (REFUSED,))
    assert check.recorded and not check.reroots(ran_ok=True)
    assert "nothing went out" in check.note


def test_a_free_action_that_sent_nothing_agrees_and_is_not_recorded() -> None:
    check = post_check(ActionClass.NAVIGATION, [])
    assert (check.verdict, check.effective_class, check.recorded) == ("agrees", ActionClass.NAVIGATION, False)
    assert not check.reroots(ran_ok=True)


def test_without_a_gate_there_is_no_evidence() -> None:
    for action_class in ActionClass:
        check = post_check(action_class, None)
        assert (check.verdict, check.effective_class, check.recorded) == ("unchecked", action_class, False)
    assert post_check(ActionClass.DESTRUCTIVE, None).reroots(ran_ok=True)
    assert not post_check(ActionClass.SAFE, None).reroots(ran_ok=True)


def test_mixed_requests_count_what_went_out() -> None:
    check = post_check(ActionClass.DESTRUCTIVE, [REFUSED, BUY])
    assert (check.verdict, check.sent, check.refused) == ("confirmed", (BUY,), (REFUSED,))
    refuted = post_check(ActionClass.DESTRUCTIVE, [REFUSED])
    assert refuted.verdict == "refuted" and "the page tried DELETE http://shop.test/cart/3" in refuted.note


def test_terminating_actions_never_run() -> None:
    assert post_check(ActionClass.TERMINATING, [BUY]).verdict == "agrees"
