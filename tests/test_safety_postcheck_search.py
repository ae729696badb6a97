"""The post-execution check inside search: an approved action runs with the gate's allowance (exactly what its
approval named), and what an action really sent confirms its class or overrides it (a misclassified action that got a
POST out re-roots the tree)."""

from __future__ import annotations

from pathlib import Path

from branchwise.actions import Action
from branchwise.core.approval import ScriptedApprover
from branchwise.core.classes import ActionClass, ActionClassifier, Classification
from branchwise.core.requests import ExpectedRequest, GatedRequest
from branchwise.observation import PageView
from branchwise.protocol import ElementFacts
from branchwise.search.action_aware import ActionAwareSearch
from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchOutcome
from branchwise.search.heuristic import HeuristicClassifier
from branchwise.search.value import ValueConfig
from branchwise.store import AuditRecord

from fake_envs import ShopEnv, ShopRun, search_shop

POSTED = "https://shop.example/cart/add"


class CallsEverythingSafe:
    """A classifier that misses the commit button: the network gate is the safety net."""

    def classify(self, action: Action, page: PageView | None, facts: ElementFacts | None = None) -> Classification:
        return Classification(ActionClass.SAFE, ("looks harmless",))


class KnowsTheForm:
    """A classifier that read the button's POST form: approving the click lets that one request through."""

    def classify(self, action: Action, page: PageView | None, facts: ElementFacts | None = None) -> Classification:
        if action.to_text().startswith("stop"):
            return Classification(ActionClass.TERMINATING, ("ends the task",))
        return Classification(ActionClass.DESTRUCTIVE, (f"submits a POST form to {POSTED}",),
                              (ExpectedRequest("POST", POSTED),))


def run(tmp_path: Path, env: ShopEnv, classifier: ActionClassifier, approver: ScriptedApprover) -> ShopRun:
    return search_shop(tmp_path, BestFirstSearch(BestFirstConfig(candidates=3, value=ValueConfig(n=2))), env,
                       classifier, approver)


def post_checks(audit: list[AuditRecord]) -> list[tuple[object, ...]]:
    return [(e.node_id, e.action_text, e.action_class, e.request_method, e.request_url, e.note.split(":")[0])
            for e in audit if e.kind == "post_check"]


def test_an_approved_destructive_action_runs_with_the_allowance_and_is_confirmed(tmp_path: Path) -> None:
    env = ShopEnv((GatedRequest("POST", POSTED, "allowed"),))
    done = run(tmp_path, env, HeuristicClassifier(), ScriptedApprover([True]))
    assert done.outcome == SearchOutcome("finished", answer="Added Planter")
    # Approved, but what it sends was not known (no DOM facts): an empty allowance, so the gate asks about each.
    assert [(a.to_text(), allowed) for a, allowed in env.executed] == [("click [2]", ())]
    assert post_checks(done.audit) == [(0, "click [2]", "destructive", "POST", POSTED, "confirmed")]
    assert "`click [2]` changed the site: #1 is the new root" in done.shown


def test_a_safe_action_that_got_a_post_out_is_treated_as_destructive(tmp_path: Path) -> None:
    env = ShopEnv((GatedRequest("POST", POSTED, "released"),))  # the user let the held POST go at the gate
    approver = ScriptedApprover([])
    done = run(tmp_path, env, CallsEverythingSafe(), approver)
    audit = done.audit
    assert done.outcome.status == "finished" and approver.requests == []
    # Ran freely: not approved, no allowance.
    assert [(a.to_text(), allowed) for a, allowed in env.executed] == [("click [2]", None)]
    assert post_checks(audit) == [(0, "click [2]", "safe", "POST", POSTED, "contradicted")]
    [row] = [e for e in audit if e.kind == "post_check"]
    assert row.reasons == [f"POST {POSTED} (released at the gate)"]
    assert "treated as destructive" in row.note
    # Re-rooted as after any destructive action: nothing before the change can be reached again.
    assert "`click [2]` changed the site: #1 is the new root" in done.shown
    by_id = {n.node_id: n for n in done.stored.nodes}
    assert by_id[1].action_class == "destructive" and by_id[0].status == "invalid"


def test_a_destructive_action_that_sent_nothing_is_refuted_and_still_re_roots(tmp_path: Path) -> None:
    env = ShopEnv(())  # the gate watched and saw no mutating request at all
    done = run(tmp_path, env, HeuristicClassifier(), ScriptedApprover([True]))
    assert done.outcome.status == "finished"
    assert post_checks(done.audit) == [(0, "click [2]", "destructive", "", "", "refuted")]
    assert "the class is refuted by what it sent" in done.shown
    assert "`click [2]` changed the site: #1 is the new root" in done.shown


def test_without_a_gate_nothing_is_checked(tmp_path: Path) -> None:
    done = run(tmp_path, ShopEnv(None), HeuristicClassifier(), ScriptedApprover([True]))
    assert done.outcome.status == "finished" and post_checks(done.audit) == []


def test_an_action_that_got_a_post_out_re_roots_even_when_it_then_failed(tmp_path: Path) -> None:
    env = ShopEnv((GatedRequest("POST", POSTED, "released"),), error="the page answered 500")
    done = run(tmp_path, env, CallsEverythingSafe(), ScriptedApprover([]))
    # No way back to the product page: search goes on from the page the failed action left.
    assert "`click [2]` changed the site: #1 is the new root" in done.shown
    by_id = {n.node_id: n for n in done.stored.nodes}
    assert by_id[1].action_class == "destructive" and by_id[0].status == "invalid"
    assert done.outcome == SearchOutcome("finished", answer="Added Planter")


def test_the_allowance_is_exactly_what_the_approval_named_in_both_strategies(tmp_path: Path) -> None:
    for strategy in (BestFirstSearch(BestFirstConfig(candidates=3, value=ValueConfig(n=2))), ActionAwareSearch()):
        env = ShopEnv((GatedRequest("POST", POSTED, "allowed"),))
        approver = ScriptedApprover([True])
        done = search_shop(tmp_path / strategy.name, strategy, env, KnowsTheForm(), approver)
        assert done.outcome.status == "finished", strategy.name
        assert [(a.to_text(), allowed) for a, allowed in env.executed] == [
            ("click [2]", (ExpectedRequest("POST", POSTED),))], strategy.name
        # The user was told what the approval covers, and the audit log keeps it.
        [question] = approver.requests
        assert question.sends == (ExpectedRequest("POST", POSTED),)
        [asked] = [e for e in done.audit if e.kind == "asked"]
        assert (asked.request_method, asked.request_url) == ("POST", POSTED)
        assert asked.note == f"approving lets one POST to {POSTED} through; anything else it sends is asked about"
