"""Usage per model role, and the approvers that allow or refuse a destructive action."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from branchwise.actions import Click
from branchwise.core.approval import (
    ApprovalRequest,
    Approver,
    Decision,
    DenyApprover,
    ScriptedApprover,
    TerminalApprover,
    approval_request,
    element_label,
)
from branchwise.core.classes import ActionClass, Classification
from branchwise.core.requests import ExpectedRequest
from branchwise.core.usage import Usage
from branchwise.llm import ChatMessage, LLMConfig
from branchwise.search.action_aware import ActionAwareConfig, ActionAwareSearch
from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchOutcome
from branchwise.search.heuristic import HeuristicClassifier
from branchwise.search.roles import ModelRoles, RoleModel
from branchwise.search.value import ValueConfig
from branchwise.store import AuditRecord, RunStore, StoredRun, format_run

from fake_envs import PRODUCT, PRODUCT_URL, ShopEnv, search_shop
from fake_models import FakeModel

ASK = [ChatMessage(role="user", content="Next action?")]
PER_CALL = Usage(calls=1, prompt_tokens=100, completion_tokens=20)


def call(model: RoleModel, times: int = 1, n: int = 1) -> None:
    async def run() -> None:
        for _ in range(times):
            await model.complete(ASK, n=n)

    asyncio.run(run())


def test_roles_sharing_a_client_count_their_own_usage() -> None:
    fake = FakeModel.always("ok", usage=PER_CALL)
    roles = ModelRoles.shared(fake)
    call(roles.policy, 3)
    call(roles.value, 1, n=4)
    assert roles.policy.usage == Usage(calls=3, prompt_tokens=300, completion_tokens=60)
    assert roles.value.usage == PER_CALL
    assert roles.reward.usage == Usage()
    assert len(fake.calls) == 4 and fake.calls[-1].n == 4
    assert roles.total() == Usage(calls=4, prompt_tokens=400, completion_tokens=80)
    assert roles.total().total_tokens == 480


def test_role_model_passes_arguments_and_config_through() -> None:
    fake = FakeModel.always("a", "b")
    model = RoleModel(fake, "reward")
    completion = asyncio.run(model.complete(ASK, n=3, temperature=0.2, max_tokens=9, logprobs=True, top_logprobs=5,
                                            stop=["\n"]))
    assert completion.texts == ["a", "b", "a"]
    [seen] = fake.calls
    assert (seen.messages, seen.n, seen.temperature, seen.max_tokens, seen.logprobs, seen.top_logprobs,
            seen.stop) == (ASK, 3, 0.2, 9, True, 5, ["\n"])
    assert model.config is fake.config


def test_roles_can_have_separate_clients() -> None:
    cheap = FakeModel(lambda _: "ok", usage=Usage(calls=1, prompt_tokens=1), config=LLMConfig(model="small"))
    big = FakeModel.always("ok", usage=PER_CALL)
    roles = ModelRoles(RoleModel(big, "policy"), RoleModel(cheap, "value"), RoleModel(cheap, "reward"))
    call(roles.policy)
    call(roles.value, 2)
    call(roles.reward)
    assert {role: model.config.model for role, model in roles.by_role().items()} == {
        "policy": "fake", "value": "small", "reward": "small", "planner": "fake",
    }
    assert roles.total() == Usage(calls=4, prompt_tokens=103, completion_tokens=20)
    # The planner (mcts only) is the policy's client unless given its own, and counts its calls apart.
    call(roles.plans)
    assert roles.usage()["planner"] == PER_CALL and roles.policy.usage.calls == 1


REQUEST = ApprovalRequest(run_id="r1", action_text="click [7]", url="https://shop.example/checkout",
                          element="button 'Place order'", reasons=("clicks the button 'Place order'", "ends a form"))


def decide(approver: Approver, request: ApprovalRequest = REQUEST) -> Decision:
    return asyncio.run(approver.decide(request))


def test_scripted_approver_answers_in_order_then_denies() -> None:
    approver = ScriptedApprover([True, False, True])
    assert [decide(approver).approved for _ in range(5)] == [True, False, True, False, False]
    assert decide(approver) == Decision(False, "script")
    assert approver.requests == [REQUEST] * 6


def terminal(typed: str) -> tuple[Decision, str]:
    """The decision for what the user typed, and what the terminal showed."""
    out = io.StringIO()
    decision = decide(TerminalApprover(io.StringIO(typed), out))
    return decision, out.getvalue()


def test_terminal_approver_accepts_only_yes() -> None:
    for typed in ("y\n", "yes\n", "  YES \n", "Y"):
        assert terminal(typed)[0] == Decision(True, "user (terminal)", typed.strip())
    for typed in ("n\n", "no\n", "yess\n", "sure\n", "\n"):
        assert terminal(typed)[0] == Decision(False, "user (terminal)", typed.strip())


def test_terminal_approver_denies_at_end_of_input() -> None:
    assert terminal("")[0] == Decision(False, "user (terminal)", "")


BACKEND = Path(__file__).resolve().parents[1] / "backend"


def test_a_run_stopped_while_the_terminal_waits_for_an_answer_lets_the_process_exit() -> None:
    """Ctrl-C or SIGTERM while "Allow it once?" waits: the process ends without a line typed (it used to hang in
    asyncio.run's shutdown, waiting for the thread that reads the terminal)."""
    program = textwrap.dedent("""
        import asyncio, os
        from branchwise.core.approval import ApprovalRequest, TerminalApprover

        async def main():
            reading, _ = os.pipe()  # a terminal nobody types into
            ask = ApprovalRequest(run_id="r", action_text="click [7]", url="https://x.example/", element="",
                                  reasons=())
            waiting = asyncio.ensure_future(TerminalApprover(os.fdopen(reading), open(os.devnull, "w")).decide(ask))
            await asyncio.sleep(0.3)
            waiting.cancel()
            try:
                await waiting
            except asyncio.CancelledError:
                print("stopped")

        asyncio.run(main())
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=20,
                          env={**os.environ, "PYTHONPATH": str(BACKEND)})
    assert (done.returncode, done.stdout) == (0, "stopped\n"), done.stderr


def test_an_answer_goes_to_the_question_waiting_and_a_late_one_is_dropped() -> None:
    """A question that timed out (the network gate's limit) leaves no reader behind to take the next one's answer, and
    a "y" typed after it timed out does not approve the next action."""
    reading, writing = os.pipe()
    approver = TerminalApprover(os.fdopen(reading), io.StringIO())

    def typed(text: str) -> None:
        os.write(writing, text.encode())

    async def main() -> list[bool]:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(approver.decide(REQUEST), 0.2)
        second = asyncio.ensure_future(approver.decide(REQUEST))
        await asyncio.sleep(0.1)
        typed("y\n")
        answers = [(await asyncio.wait_for(second, 5)).approved]
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(approver.decide(REQUEST), 0.2)
        typed("y\n")  # too late for the question that timed out
        await asyncio.sleep(0.2)
        third = asyncio.ensure_future(approver.decide(REQUEST))
        await asyncio.sleep(0.1)
        typed("n\n")
        answers.append((await asyncio.wait_for(third, 5)).approved)
        return answers

    try:
        assert asyncio.run(main()) == [True, False]
    finally:
        os.close(writing)


def test_terminal_approver_shows_the_action_page_and_reasons() -> None:
    _, shown = terminal("n\n")
    assert "  click [7]  on button 'Place order'\n" in shown
    assert "  page: https://shop.example/checkout\n" in shown
    assert "  why flagged: clicks the button 'Place order'\n  why flagged: ends a form\n" in shown
    assert shown.endswith("Allow it once? [y/N] ")


def test_terminal_approver_without_an_element_names_only_the_action() -> None:
    request = ApprovalRequest(run_id="r1", action_text="press [Enter]", url="https://x.example/", element="",
                              reasons=())
    out = io.StringIO()
    asyncio.run(TerminalApprover(io.StringIO("n\n"), out).decide(request))
    assert "  press [Enter]\n  page: https://x.example/\n  what it sends is not known before it runs" in out.getvalue()
    assert " on " not in out.getvalue()


def test_terminal_approver_says_what_the_approval_lets_through() -> None:
    post = ExpectedRequest("POST", "https://shop.example/order")
    out = io.StringIO()
    asyncio.run(TerminalApprover(io.StringIO("n\n"), out).decide(ApprovalRequest(
        run_id="r1", action_text="click [7]", url="https://shop.example/checkout", element="button 'Buy'",
        reasons=("submits a POST form",), sends=(post,))))
    assert ("  approving lets one POST to https://shop.example/order through; anything else it sends is asked about\n"
            "Allow it once? [y/N] ") in out.getvalue()
    # A held request's question says nothing of the kind: it is about that one request.
    out = io.StringIO()
    asyncio.run(TerminalApprover(io.StringIO("n\n"), out).decide(ApprovalRequest(
        run_id="r1", action_text="the page tried to send POST to https://shop.example/buy", url="", element="",
        reasons=("no approval covers it",), kind="request")))
    assert "approving" not in out.getvalue() and "not known" not in out.getvalue()


def test_deny_approver_says_why() -> None:
    assert decide(DenyApprover()) == Decision(
        False, "policy", "nobody can be asked: this run was started without a way to ask for approval")
    assert decide(DenyApprover("runs from the API never act destructively")).note == (
        "runs from the API never act destructively")


ADD_REASON = "clicks the button 'Add to cart'"


def test_element_label_names_the_target_on_the_page_it_runs_on() -> None:
    assert element_label(Click(2), PRODUCT) == "button 'Add to cart'"
    assert element_label(Click(99), PRODUCT) == ""
    assert element_label(Click(2), None) == ""
    request = approval_request("r1", Click(2), "click [2]", PRODUCT_URL, PRODUCT,
                               Classification(ActionClass.DESTRUCTIVE, (ADD_REASON,)))
    assert request == ApprovalRequest("r1", "click [2]", PRODUCT_URL, "button 'Add to cart'", (ADD_REASON,))


def best_first(approver: Approver, tmp_path: Path) -> tuple[SearchOutcome, ShopEnv, StoredRun, str]:
    """Best-first search on the task "add the planter to the cart"; the outcome, the env, the stored run, the output."""
    env = ShopEnv()
    done = search_shop(tmp_path, BestFirstSearch(BestFirstConfig(candidates=3, value=ValueConfig(n=2))), env,
                       HeuristicClassifier(), approver)
    return done.outcome, env, done.stored, done.shown


def audit_log(tmp_path: Path) -> list[AuditRecord]:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        return store.audit_log("r1")


def test_best_first_asks_with_the_element_and_the_reasons_and_records_the_approval(tmp_path: Path) -> None:
    approver = ScriptedApprover([True])
    outcome, env, stored, shown = best_first(approver, tmp_path)
    assert approver.requests == [ApprovalRequest("r1", "click [2]", PRODUCT_URL, "button 'Add to cart'",
                                                 (ADD_REASON,))]
    assert outcome == SearchOutcome("finished", answer="Added Planter")
    assert env.actions == [Click(2)]
    # One verdict row per classified action, the decision on it: `show` lists the approved action once.
    verdicts = [(c.node_id, c.action_text, c.reasons, c.decision, c.decided_by) for c in stored.classifications
                if c.action_text == "click [2]"]
    assert verdicts == [(0, "click [2]", [ADD_REASON], "approved", "script")]
    assert format_run(stored).split("Destructive actions:\n")[1].splitlines() == [
        "  #0 click [2]: approved by script", f"    - {ADD_REASON}"]
    # The audit log keeps the verdict, the question, the answer, and the action sent and done, in that order.
    add = [e for e in audit_log(tmp_path) if e.action_text == "click [2]"]
    assert [(e.kind, e.node_id, e.action_class, e.reasons, e.url, e.decision, e.decided_by) for e in add] == [
        ("classified", 0, "destructive", [ADD_REASON], PRODUCT_URL, None, None),
        ("asked", 0, "destructive", [ADD_REASON], PRODUCT_URL, None, None),
        ("decided", 0, "destructive", [], PRODUCT_URL, "approved", "script"),
        ("action_sent", 0, "destructive", [], PRODUCT_URL, None, None),
        ("action_result", 0, None, [], "", None, None),
    ]
    assert add[1].element == add[2].element == "button 'Add to cart'"
    assert add[0].created_at <= add[1].created_at <= add[2].created_at
    assert "`click [2]` changed the site: #1 is the new root" in shown
    by_id = {n.node_id: n for n in stored.nodes}
    assert by_id[0].status == "invalid", "nothing before the change to the site can be reached again"


def test_best_first_denied_runs_nothing_and_says_why_it_stopped(tmp_path: Path) -> None:
    approver = ScriptedApprover([False])
    outcome, env, stored, shown = best_first(approver, tmp_path)
    assert [r.element for r in approver.requests] == ["button 'Add to cart'"]
    assert env.actions == []
    assert outcome.status == "failed" and "not allowed to run `click [2]`" in outcome.reason
    assert "not running `click [2]`: denied by script" in shown
    assert [(c.decision, c.decided_by) for c in stored.classifications if c.decision] == [("denied", "script")]
    assert [(e.kind, e.decision) for e in audit_log(tmp_path) if e.kind != "classified"] == [
        ("asked", None), ("decided", "denied")]
    # Nothing ran, so the tree holds only the start page; the refused action is on record as a verdict.
    assert [n.node_id for n in stored.nodes] == [0]


def test_action_aware_denied_says_which_action_it_was_not_allowed_to_run(tmp_path: Path) -> None:
    approver = ScriptedApprover([False])
    env = ShopEnv()
    done = search_shop(tmp_path, ActionAwareSearch(ActionAwareConfig(rephrase=False)), env, HeuristicClassifier(),
                       approver)
    assert [r.action_text for r in approver.requests] == ["click [2]"]
    assert env.actions == []
    assert done.outcome == SearchOutcome("failed", reason="no candidate action is left to try; not allowed to run "
                                                          "`click [2]`")
    assert "not running `click [2]`: denied by script" in done.shown
