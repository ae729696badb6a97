"""A fake shop for the search tests: a product page whose 'Add to cart' button leads to the cart, the environment that
stands in for BrowserEnv there, and the model answers that make a search add the planter to the cart."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from branchwise.actions import Action
from branchwise.agent.env import EnvView, ExecResult
from branchwise.agent.reporting import TerminalReporter
from branchwise.core.approval import Approver
from branchwise.core.classes import ActionClassifier
from branchwise.core.requests import ExpectedRequest, GatedRequest
from branchwise.observation import PageView
from branchwise.protocol import ElementFacts
from branchwise.search.context import SearchContext, SearchOutcome, SearchStrategy
from branchwise.search.roles import ModelRoles, RoleModel
from branchwise.search.state import SearchState
from branchwise.search.trace import SearchTrace
from branchwise.store import AuditRecord, RunRecord, RunStore, StoredRun

from fake_models import Call, FakeModel
from pageviews import page

PRODUCT_URL, CART_URL = "https://shop.example/product/7", "https://shop.example/cart"
# [1] link 'Home', [2] button 'Add to cart'
PRODUCT = page(("link", "Home"), ("button", "Add to cart"), url=PRODUCT_URL, title="Planter")
CART = page(("link", "Home"), ("status", "Added Planter to your cart."), url=CART_URL, title="Cart")
TASK = "Add the planter to the cart"


@dataclass
class ShopEnv:
    """Any action leads from the product page to the cart. `requests`: what a network gate saw each action send
    (None: no gate watched)."""

    requests: tuple[GatedRequest, ...] | None = None
    # Set: every action fails with this error (after sending `requests`).
    error: str = ""
    url: str = PRODUCT_URL
    # The working tab, as BrowserEnv has it (the run records where it works).
    tab_id: int = 1
    last: EnvView | None = None
    # Each action run, and the allowance it ran with (None: not approved; else what its approval lets through).
    executed: list[tuple[Action, tuple[ExpectedRequest, ...] | None]] = field(default_factory=list)

    @property
    def actions(self) -> list[Action]:
        return [action for action, _ in self.executed]

    async def observe(self) -> EnvView:
        shown: PageView = PRODUCT if self.url == PRODUCT_URL else CART
        self.last = EnvView(shown.text, shown.url, shown.title, tab_id=1, raw_node_count=len(shown.elements),
                            page=shown)
        return self.last

    async def execute(self, action: Action, *, allow: Sequence[ExpectedRequest] | None = None) -> ExecResult:
        self.executed.append((action, tuple(allow) if allow is not None else None))
        self.url = CART_URL
        return ExecResult(not self.error, self.error, requests=self.requests)

    async def inspect(self, element_ids: object) -> dict[int, ElementFacts]:
        return {}


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


@dataclass(frozen=True)
class ShopRun:
    outcome: SearchOutcome
    stored: StoredRun
    audit: list[AuditRecord]
    # What the terminal reporter printed.
    shown: str


def search_shop(tmp_path: Path, strategy: SearchStrategy, env: ShopEnv, classifier: ActionClassifier,
                approver: Approver) -> ShopRun:
    """One search for TASK on the shop, recorded in a store under tmp_path as run r1."""
    out = io.StringIO()
    reporter = TerminalReporter(out)
    roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                       RoleModel(FakeModel(value), "reward"))
    with RunStore(tmp_path / "runs.sqlite3") as store:
        store.start_run(RunRecord(run_id="r1", task=TASK, strategy=strategy.name))
        state = SearchState()
        trace = SearchTrace("r1", strategy.name, reporter, store, state)
        ctx = SearchContext("r1", TASK, env, roles, NoBacktracker(), classifier, approver,  # type: ignore[arg-type]
                            trace, reporter, [], state)
        outcome = asyncio.run(strategy.search(ctx))
        return ShopRun(outcome, store.load_run("r1"), store.audit_log("r1"), out.getvalue())
