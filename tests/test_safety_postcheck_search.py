"""The post-execution check inside search: an approved action runs with the gate's allowance, and what an action
really sent confirms its class or overrides it (a misclassified action that got a POST out re-roots the tree)."""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from pathlib import Path

from branchwise.actions import Action
from branchwise.agent.env import EnvView, ExecResult
from branchwise.agent.reporting import TerminalReporter
from branchwise.agent.watch import GatedRequest
from branchwise.observation import PageView
from branchwise.protocol import ElementFacts
from branchwise.search.approval import ScriptedApprover
from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.classes import ActionClass, Classification
from branchwise.search.context import SearchContext, SearchOutcome
from branchwise.search.heuristic import HeuristicClassifier
from branchwise.search.roles import ModelRoles, RoleModel
from branchwise.search.trace import SearchTrace
from branchwise.search.value import ValueConfig
from branchwise.store import AuditRecord, RunRecord, RunStore, StoredRun

from fake_models import Call, FakeModel
from pageviews import page

PRODUCT_URL, CART_URL = "https://shop.example/product/7", "https://shop.example/cart"
PRODUCT = page(("link", "Home"), ("button", "Add to cart"), url=PRODUCT_URL, title="Planter")
CART = page(("link", "Home"), ("status", "Added Planter to your cart."), url=CART_URL, title="Cart")
POSTED = "https://shop.example/cart/add"


@dataclass
class GatedShopEnv:
    """'Add to cart' leads to the cart; `requests` is what the fake gate saw it send (None: no gate watched)."""

    requests: tuple[GatedRequest, ...] | None
    url: str = PRODUCT_URL
    last: EnvView | None = None
    executed: list[tuple[Action, bool]] = field(default_factory=list)

    async def observe(self) -> EnvView:
        shown: PageView = PRODUCT if self.url == PRODUCT_URL else CART
        self.last = EnvView(shown.text, shown.url, shown.title, tab_id=1, raw_node_count=len(shown.elements),
                            page=shown)
        return self.last

    async def execute(self, action: Action, *, allow_mutations: bool = False) -> ExecResult:
        self.executed.append((action, allow_mutations))
        self.url = CART_URL
        return ExecResult(True, requests=self.requests)

    async def inspect(self, element_ids: object) -> dict[int, ElementFacts]:
        return {}


class CallsEverythingSafe:
    """A classifier that misses the commit button: the network gate is the safety net."""

    def classify(self, action: Action, page: PageView | None, facts: ElementFacts | None = None) -> Classification:
        return Classification(ActionClass.SAFE, ("looks harmless",))


class NoBacktracker:
    async def move(self, *args: object) -> object:
        raise AssertionError("this search never has to go back")


def policy(call: Call) -> str:
    action = "stop [Added Planter]" if CART_URL in call.last else "click [2]"
    return f"Let's think step-by-step. In summary, the next action I will perform is ```{action}```"


def value(call: Call) -> str:
    if "Agent's answer to the user: Added Planter" in call.last:
        return "Thoughts: done.\nStatus: success"
    return "Thoughts: not yet.\nStatus: failure\nOn the right track to success: yes"


def run(tmp_path: Path, env: GatedShopEnv, classifier: object,
        approver: ScriptedApprover) -> tuple[SearchOutcome, StoredRun, list[AuditRecord], str]:
    out = io.StringIO()
    reporter = TerminalReporter(out)
    roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                       RoleModel(FakeModel(value), "reward"))
    with RunStore(tmp_path / "runs.sqlite3") as store:
        store.start_run(RunRecord(run_id="r1", task="Add the planter to the cart", strategy="best_first"))
        trace = SearchTrace("r1", "best_first", reporter, store)
        ctx = SearchContext("r1", "Add the planter to the cart", env, roles, NoBacktracker(),  # type: ignore[arg-type]
                            classifier, approver, trace, reporter, [])  # type: ignore[arg-type]
        outcome = asyncio.run(BestFirstSearch(BestFirstConfig(candidates=3, value=ValueConfig(n=2))).search(ctx))
        return outcome, store.load_run("r1"), store.audit_log("r1"), out.getvalue()


def post_checks(audit: list[AuditRecord]) -> list[tuple[object, ...]]:
    return [(e.node_id, e.action_text, e.action_class, e.request_method, e.request_url, e.note.split(":")[0])
            for e in audit if e.kind == "post_check"]


def test_an_approved_destructive_action_runs_with_the_allowance_and_is_confirmed(tmp_path: Path) -> None:
    env = GatedShopEnv((GatedRequest("POST", POSTED, "allowed"),))
    outcome, _, audit, shown = run(tmp_path, env, HeuristicClassifier(), ScriptedApprover([True]))
    assert outcome == SearchOutcome("finished", answer="Added Planter")
    assert [(a.to_text(), allowed) for a, allowed in env.executed] == [("click [2]", True)]
    assert post_checks(audit) == [(0, "click [2]", "destructive", "POST", POSTED, "confirmed")]
    assert "`click [2]` changed the site: #1 is the new root" in shown


def test_a_safe_action_that_got_a_post_out_is_treated_as_destructive(tmp_path: Path) -> None:
    env = GatedShopEnv((GatedRequest("POST", POSTED, "released"),))  # the user let the held POST go at the gate
    approver = ScriptedApprover([])
    outcome, stored, audit, shown = run(tmp_path, env, CallsEverythingSafe(), approver)
    assert outcome.status == "finished" and approver.requests == []
    # Ran freely: no allowance.
    assert [(a.to_text(), allowed) for a, allowed in env.executed] == [("click [2]", False)]
    assert post_checks(audit) == [(0, "click [2]", "safe", "POST", POSTED, "contradicted")]
    [row] = [e for e in audit if e.kind == "post_check"]
    assert row.reasons == [f"POST {POSTED} (released at the gate)"]
    assert "treated as destructive" in row.note
    # Re-rooted as after any destructive action: nothing before the change can be reached again.
    assert "`click [2]` changed the site: #1 is the new root" in shown
    by_id = {n.node_id: n for n in stored.nodes}
    assert by_id[1].action_class == "destructive" and by_id[0].status == "invalid"


def test_a_destructive_action_that_sent_nothing_is_refuted_and_still_re_roots(tmp_path: Path) -> None:
    env = GatedShopEnv(())  # the gate watched and saw no mutating request at all
    outcome, _, audit, shown = run(tmp_path, env, HeuristicClassifier(), ScriptedApprover([True]))
    assert outcome.status == "finished"
    assert post_checks(audit) == [(0, "click [2]", "destructive", "", "", "refuted")]
    assert "the class is refuted by what it sent" in shown
    assert "`click [2]` changed the site: #1 is the new root" in shown


def test_without_a_gate_nothing_is_checked(tmp_path: Path) -> None:
    env = GatedShopEnv(None)
    outcome, _, audit, _ = run(tmp_path, env, HeuristicClassifier(), ScriptedApprover([True]))
    assert outcome.status == "finished" and post_checks(audit) == []
