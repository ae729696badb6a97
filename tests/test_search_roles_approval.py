"""Usage per model role, and the approvers that allow or refuse a destructive action."""

from __future__ import annotations

import asyncio
import io

from branchwise.llm import ChatMessage, LLMConfig, Usage
from branchwise.search.approval import (
    ApprovalRequest,
    Approver,
    Decision,
    DenyApprover,
    ScriptedApprover,
    TerminalApprover,
)
from branchwise.search.roles import ModelRoles, RoleModel

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
        "policy": "fake", "value": "small", "reward": "small",
    }
    assert roles.total() == Usage(calls=4, prompt_tokens=103, completion_tokens=20)


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
    assert "  press [Enter]\n  page: https://x.example/\nAllow it once? [y/N] " in out.getvalue()
    assert " on " not in out.getvalue()


def test_deny_approver_says_why() -> None:
    assert decide(DenyApprover()) == Decision(
        False, "policy", "nobody can be asked: confirmation in the side panel is not available yet")
    assert decide(DenyApprover("runs from the API never act destructively")).note == (
        "runs from the API never act destructively")
