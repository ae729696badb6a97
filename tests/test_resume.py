"""Resume: where an interrupted run goes on from, what it remembers, and that an action of unknown outcome is never
run again without the page or the user saying so. The whole, with a real crash, is in e2e/test_faults_e2e.py (the
"backend killed" rows) and e2e/test_sidepanel_e2e.py (resumed from the panel)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from pathlib import Path

import pytest

from branchwise.actions import Action, Stop
from branchwise.agent.env import ExecResult
from branchwise.agent.records import RunResult, StepRecord
from branchwise.agent.reporting import TerminalReporter
from branchwise.browser import BrowserDisconnected
from branchwise.core.approval import PolicyApprover
from branchwise.core.budget import Limits
from branchwise.core.requests import ExpectedRequest
from branchwise.safety.secrets import mask_task
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.best_first import BestFirstConfig
from branchwise.search.heuristic import HeuristicClassifier
from branchwise.search.profiles import search_config
from branchwise.search.resume import (
    ResumePoint,
    Unresumable,
    recorded_path,
    restored_tree,
    resume_point,
    verdict,
)
from branchwise.search.roles import ModelRoles, RoleModel
from branchwise.search.validate import validate_action
from branchwise.search.value import ValueConfig
from branchwise.store import (
    AuditRecord,
    DemonstrationRecord,
    DemoStep,
    NodeRecord,
    RunRecord,
    RunStore,
    StoredRun,
    UsageRecord,
)

from fake_envs import CART_URL, PRODUCT, PRODUCT_URL, TASK, ShopEnv, policy, value
from fake_models import Call, FakeModel

HOME = "https://shop.example/"


def interrupted(store: RunStore, *, in_flight: bool = True, task: str = TASK, start_url: str = "") -> StoredRun:
    """Run r1 as a crash leaves it: home -> product page, `click [2]` (Add to cart) sent there with no result."""
    store.start_run(RunRecord(run_id="r1", task=task, strategy="best_first", tab_id=1, start_url=start_url))
    store.upsert_node(NodeRecord(run_id="r1", node_id=0, url=HOME, observation_text="[1] link 'Planter'",
                                 status="expanded"))
    store.upsert_node(NodeRecord(run_id="r1", node_id=1, parent_id=0, depth=1, url=PRODUCT_URL,
                                 action_text="click [1]", thought="The planter's page.",
                                 observation_text=PRODUCT.text, status="expanded"))
    # A sibling search had tried: on record, not part of the path resumed.
    store.upsert_node(NodeRecord(run_id="r1", node_id=2, parent_id=0, depth=1, url=HOME + "about",
                                 action_text="click [9]", status="expanded"))
    store.set_position("r1", 1, 1)
    store.set_usage(UsageRecord(run_id="r1", role="policy", calls=4, prompt_tokens=400, completion_tokens=40))
    if in_flight:
        store.add_audit(AuditRecord(run_id="r1", kind="action_sent", node_id=1, action_text="click [2]",
                                    action_class="destructive", url=PRODUCT_URL))
    store.finish_run("r1", "interrupted", reason="the backend stopped before the run finished")
    return store.load_run("r1")


def reopened(store: RunStore) -> ResumePoint:
    """Where r1 goes on from, reopened in the store as the CLI and the side panel do before they resume it."""
    point = resume_point(store.load_run("r1"))
    store.reopen_run("r1")
    return point


def resume(store: RunStore, env: ShopEnv, approve: bool) -> tuple[RunResult, PolicyApprover]:
    roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                       RoleModel(FakeModel(value), "reward"))
    approver = PolicyApprover(approve, "the test's answer")
    config = SearchConfig(strategy="best_first", options=BestFirstConfig(candidates=3, value=ValueConfig(n=2)))
    agent = SearchAgent(roles, None, config, store=store, approver=approver, classifier=HeuristicClassifier())
    point = resume_point(store.load_run("r1"))
    store.reopen_run("r1")
    result = asyncio.run(agent.run(TASK, env, TerminalReporter(io.StringIO()), resume=point))  # type: ignore[arg-type]
    return result, approver


def test_only_an_interrupted_run_with_a_page_on_record_can_be_resumed(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        stored = interrupted(store)
        running = stored.model_copy(update={"run": stored.run.model_copy(update={"status": "finished"})})
        with pytest.raises(Unresumable, match="run r1 is finished: only an interrupted run can be resumed"):
            resume_point(running)
        blank = stored.model_copy(update={"nodes": []})
        with pytest.raises(Unresumable, match="stopped before it had looked at its page"):
            resume_point(blank)


def test_a_task_with_a_password_must_be_given_again_as_first_written(tmp_path: Path) -> None:
    task = "Log in with password hunter22 and open my orders"
    with RunStore(tmp_path / "runs.sqlite3") as store:
        stored = interrupted(store, task=mask_task(task))
        assert "hunter22" not in stored.run.task
        with pytest.raises(Unresumable, match="give the task again"):
            resume_point(stored)
        with pytest.raises(Unresumable, match="the task given is not the one run r1 was started with"):
            resume_point(stored, "Log in with password hunter22 and open my invoices")  # another task
        assert resume_point(stored, task).node_id == 1


def test_the_point_is_where_the_action_was_sent_else_the_last_position(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        stored = interrupted(store)
        point = resume_point(stored)
        assert (point.tab_id, point.node_id, point.unfinished) == (1, 1, "click [2]")
        assert point.unfinished_class is not None and point.unfinished_class.value == "destructive"
    with RunStore(tmp_path / "other.sqlite3") as store:
        point = resume_point(interrupted(store, in_flight=False))
        assert (point.node_id, point.unfinished) == (1, None)


def test_the_restored_tree_is_the_recorded_path_and_new_ids_come_after_every_recorded_one(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        point = resume_point(interrupted(store))
    assert [n.node_id for n in recorded_path(point.stored, 1)] == [0, 1]
    tree = restored_tree(point)
    assert sorted(tree.nodes) == [0, 1] and tree.root_id == 1
    assert [n.action_text for n in tree.lineage(1)] == ["", "click [1]"]
    assert tree.lineage(1)[1].thought == "The planter's page."
    assert tree._next_id() == 3  # node 2 is on record, though not in the restored path


def test_the_restored_path_has_seen_the_numbers_its_task_and_pages_showed(tmp_path: Path) -> None:
    """An answer after a resume may give a number read before the backend stopped (validate: grounding)."""
    with RunStore(tmp_path / "runs.sqlite3") as store:
        stored = interrupted(store, task="Add 2 planters to the cart")
    home = stored.nodes[0].model_copy(update={"observation_text": "[1] link 'Planter'\n[2] StaticText '$24.50'"})
    tree = restored_tree(resume_point(stored.model_copy(update={"nodes": [home, *stored.nodes[1:]]})))
    space = tree[1].space
    assert space.seen_numbers is not None and {"2", "24.5"} <= space.seen_numbers
    assert validate_action(Stop("$24.50 each"), None, space) is None
    assert validate_action(Stop("$30"), None, space) is not None


def view_of(env: ShopEnv) -> object:
    return asyncio.run(env.observe())


@pytest.mark.parametrize(("url", "in_flight", "expected"), [
    (CART_URL, True, "ran"), (PRODUCT_URL, True, "unchanged"), (PRODUCT_URL, False, "same"), (CART_URL, False, "moved"),
])
def test_the_page_decides_what_happened(tmp_path: Path, url: str, in_flight: bool, expected: str) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        point = resume_point(interrupted(store, in_flight=in_flight))
    tree = restored_tree(point)
    assert verdict(point, tree[point.node_id], view_of(ShopEnv(url=url))) == expected  # type: ignore[arg-type]


def test_an_action_the_page_shows_done_is_not_run_again_and_the_run_finishes_under_its_own_id(tmp_path: Path) -> None:
    env = ShopEnv(url=CART_URL)  # the crash came after the add: the tab shows the cart
    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store)
        result, approver = resume(store, env, approve=True)
        stored = store.load_run("r1")
        audit = store.audit_log("r1")
    assert env.executed == [] and approver.asked == []
    assert (result.run_id, result.status, result.answer) == ("r1", "finished", "Added Planter")
    assert stored.run.status == "finished" and stored.unfinished_action is None
    by_id = {n.node_id: n for n in stored.nodes}
    # The add is on record as a step (node 3, after every recorded id), the answer after it.
    assert (by_id[3].parent_id, by_id[3].action_text, by_id[3].url) == (1, "click [2]", CART_URL)
    assert stored.trajectory[:3] == [0, 1, 3] and by_id[stored.trajectory[-1]].answer == "Added Planter"
    assert [a.note for a in audit if a.kind == "action_result"] == [
        "done (judged on resume: the page changed since it was sent)"]
    # Steps are numbered on from the recorded one; what the run used before the crash is in its totals.
    assert [step.index for step in result.steps] == [2, 3]
    policy_usage = next(u for u in stored.usage if u.role == "policy")
    assert policy_usage.calls > 4 and policy_usage.prompt_tokens >= 400
    assert result.usage.calls == sum(u.calls for u in stored.usage)


def test_a_tab_moved_elsewhere_is_worked_on_as_it_is_and_the_record_keeps_the_first_page(tmp_path: Path) -> None:
    env = ShopEnv(url=CART_URL)  # no action in flight, yet the tab shows the cart (the user went there)
    out = io.StringIO()
    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store, in_flight=False)
        roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        config = SearchConfig(strategy="best_first", options=BestFirstConfig(candidates=1, value=ValueConfig(n=1)))
        agent = SearchAgent(roles, None, config, store=store, classifier=HeuristicClassifier())
        result = asyncio.run(agent.run(TASK, env, TerminalReporter(out),  # type: ignore[arg-type]
                                       resume=reopened(store)))
        stored = store.load_run("r1")
    assert (result.status, result.answer, env.executed) == ("finished", "Added Planter", [])
    assert f"the tab no longer shows the page of #1 ({PRODUCT_URL})" in out.getvalue()
    by_id = {n.node_id: n for n in stored.nodes}
    assert (by_id[1].url, by_id[1].observation_text) == (PRODUCT_URL, PRODUCT.text)
    # The cart is a node of its own, no step led there.
    assert (by_id[3].parent_id, by_id[3].url, by_id[3].action_text) == (1, CART_URL, "")


def test_an_unchanged_page_asks_the_user_and_a_no_runs_nothing(tmp_path: Path) -> None:
    env = ShopEnv(url=PRODUCT_URL)  # the crash came before the click reached the page
    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store)
        result, approver = resume(store, env, approve=False)
        audit = store.audit_log("r1")
        stored = store.load_run("r1")
    assert env.executed == []
    assert approver.asked[0].action_text == "click [2]"
    assert "may or may not have run" in approver.asked[0].reasons[0]
    assert result.status == "failed" and "not allowed to run `click [2]`" in result.reason
    assert "not run again on resume" in [a.note for a in audit if a.kind == "action_result"]
    assert stored.unfinished_action is None


def test_an_unchanged_page_and_a_yes_runs_the_action_once_more_and_asks_once(tmp_path: Path) -> None:
    env = ShopEnv(url=PRODUCT_URL)
    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store)
        result, approver = resume(store, env, approve=True)
    assert [a.to_text() for a in env.actions] == ["click [2]"]
    assert len(approver.asked) == 1
    assert (result.status, result.answer) == ("finished", "Added Planter")


def test_the_resumed_prompt_shows_the_recorded_history(tmp_path: Path) -> None:
    env = ShopEnv(url=CART_URL)
    roles_seen: list[str] = []

    def seen_policy(call: Call) -> str:
        roles_seen.append(call.last)
        return policy(call)

    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store)
        fake = FakeModel(seen_policy)
        roles = ModelRoles(RoleModel(fake, "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        config = SearchConfig(strategy="best_first", options=BestFirstConfig(candidates=1, value=ValueConfig(n=1)))
        agent = SearchAgent(roles, None, config, store=store, approver=PolicyApprover(True, "test"),
                            classifier=HeuristicClassifier())
        asyncio.run(agent.run(TASK, env, TerminalReporter(io.StringIO()),  # type: ignore[arg-type]
                              resume=reopened(store)))
    assert roles_seen and "click [1]" in roles_seen[0] and "click [2]" in roles_seen[0]


def test_usage_and_position_are_on_record_before_an_action_is_sent_and_at_every_step(tmp_path: Path) -> None:
    seen_at_steps: list[int] = []
    seen_when_sent: list[tuple[int, int | None, int | None]] = []

    class Watching(TerminalReporter):
        async def step(self, run_id: str, record: StepRecord) -> None:
            seen_at_steps.append(sum(u.calls for u in store.load_run(run_id).usage))

    class WatchedShop(ShopEnv):
        async def execute(self, action: Action, *, allow: Sequence[ExpectedRequest] | None = None) -> ExecResult:
            run = store.load_run("g1")
            seen_when_sent.append((sum(u.calls for u in run.usage), run.run.tab_id, run.run.current_node))
            return await super().execute(action, allow=allow)

    with RunStore(tmp_path / "runs.sqlite3") as store:
        roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        agent = SearchAgent(roles, None, SearchConfig(strategy="greedy"), store=store)
        asyncio.run(agent.run(TASK, WatchedShop(), Watching(io.StringIO()), run_id="g1"))  # type: ignore[arg-type]
    # The add: its model call, the tab and the product page's node were on record before it went to the page.
    assert seen_when_sent == [(1, 1, 0)]
    # Greedy asks once per step: the store had each call before the step was shown.
    assert seen_at_steps == [1, 2]


class DroppedShop(ShopEnv):
    """The extension goes away during the first action; `lands` says whether the action took effect first."""

    def __init__(self, lands: bool) -> None:
        super().__init__()
        self.lands = lands

    async def execute(self, action: Action, *, allow: Sequence[ExpectedRequest] | None = None) -> ExecResult:
        if not self.executed:
            self.executed.append((action, None))
            if self.lands:
                self.url = CART_URL
            raise BrowserDisconnected("the extension disconnected during act")
        return await super().execute(action, allow=allow)


@pytest.mark.parametrize("lands", [True, False])
def test_an_action_cut_off_by_a_worker_restart_is_judged_by_the_page_and_not_sent_again_by_the_step(tmp_path: Path,
                                                                                        lands: bool) -> None:
    env = DroppedShop(lands)
    out = io.StringIO()
    with RunStore(tmp_path / "runs.sqlite3") as store:
        roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        agent = SearchAgent(roles, None, SearchConfig(strategy="greedy", max_steps=3), store=store)
        result = asyncio.run(agent.run(TASK, env, TerminalReporter(out), run_id="w1"))  # type: ignore[arg-type]
    assert "the extension went away while `click [2]` ran" in out.getvalue()
    if lands:
        assert (result.status, result.answer, len(env.executed)) == ("finished", "Added Planter", 1)
        assert "the page changed while the extension was away: `click [2]` ran" in out.getvalue()
    else:
        # Not sent again by the step: it failed, and the model's next proposal is a new step.
        assert result.steps[0].error.startswith("the extension restarted while it ran and the page is as before")
        assert [a.to_text() for a, _ in env.executed] == ["click [2]", "click [2]"]
        assert result.status == "finished"


# Greedy counts every step, the answer too; action_aware counts the actions it runs, and may answer after the last.
@pytest.mark.parametrize(("strategy", "max_steps", "ran"), [("greedy", 2, ["click [2]"]), ("action_aware", 1, [])])
def test_a_resumed_run_counts_the_steps_it_took_before_against_its_limit(tmp_path: Path, strategy: str,
                                                                          max_steps: int, ran: list[str]) -> None:
    env = ShopEnv(url=PRODUCT_URL)  # resumed at node 1: one step (the click to the product page) already taken
    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store, in_flight=False)
        roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        agent = SearchAgent(roles, None, SearchConfig(strategy=strategy, max_steps=max_steps), store=store,
                            approver=PolicyApprover(True, "test"), classifier=HeuristicClassifier())
        result = asyncio.run(agent.run(TASK, env, TerminalReporter(io.StringIO()),  # type: ignore[arg-type]
                                       resume=reopened(store)))
    assert [a.to_text() for a in env.actions] == ran
    assert result.status == "failed" and f"step limit ({max_steps})" in result.reason


def test_a_resumed_run_counts_what_it_used_before_against_its_limits(tmp_path: Path) -> None:
    env = ShopEnv(url=CART_URL)
    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store, in_flight=False)  # 4 policy calls on record
        roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        config = SearchConfig(strategy="greedy", limits=Limits(max_model_calls=4))
        agent = SearchAgent(roles, None, config, store=store)
        result = asyncio.run(agent.run(TASK, env, TerminalReporter(io.StringIO()),  # type: ignore[arg-type]
                                       resume=reopened(store)))
    assert result.status == "failed" and "150" not in result.reason and "model calls" in result.reason
    assert result.usage.calls == 4  # none more


def test_a_run_records_how_it_plans_so_a_resume_can_plan_the_same_way(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        config = search_config("greedy", profile="laptop", temperature=0.0, examples=True, max_steps=7,
                               limits=Limits(max_tokens=5000))
        agent = SearchAgent(roles, None, config, store=store)
        out = io.StringIO()
        asyncio.run(agent.run(TASK, ShopEnv(), TerminalReporter(out), run_id="g1"))  # type: ignore[arg-type]
        run = store.load_run("g1").run
    assert (run.strategy, run.profile, run.temperature, run.examples) == ("greedy", "laptop", 0.0, True)
    assert run.max_steps == 7 and run.limits == Limits(max_model_calls=150, max_tokens=5000, timeout_s=1800.0)
    assert "strategy greedy, profile laptop, temperature 0, retrieved steps, limits: 150 model calls" in out.getvalue()


def test_a_resumed_run_retrieves_the_demonstrations_of_the_site_it_started_on(tmp_path: Path) -> None:
    """The tab may be on another host by now (a shop's payment page); what was explored is kept by the start page's."""
    with RunStore(tmp_path / "runs.sqlite3") as store:
        interrupted(store, in_flight=False, start_url="https://www.garden.example/")
        step = DemoStep(url="https://garden.example/", action_text="stop")
        store.add_demonstration(DemonstrationRecord(site="garden.example", instruction="Buy a planter", score=5,
                                                    steps=[step]))
        roles = ModelRoles(RoleModel(FakeModel(policy), "policy"), RoleModel(FakeModel(value), "value"),
                           RoleModel(FakeModel(value), "reward"))
        agent = SearchAgent(roles, None, SearchConfig(strategy="greedy", examples=True), store=store)
        out = io.StringIO()
        asyncio.run(agent.run(TASK, ShopEnv(url=CART_URL), TerminalReporter(out),  # type: ignore[arg-type]
                              resume=reopened(store)))
    assert "1 demonstration(s) of garden.example" in out.getvalue()
