"""A prompt over the model's context is cut to fit before it is sent, and one the server still rejects (HTTP 400,
typically over its context) is shrunk and sent again instead of ending the run; other errors stand."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import pytest

from branchwise.chat_model import (
    INSTRUCTIONS_MARK,
    MAX_SHRINKS,
    SHRUNK_MARKER,
    complete_fitting,
    fit_to_context,
    shrink_messages,
    split_instructions,
)
from branchwise.llm import ChatMessage, LLMConfig, LLMError
from branchwise.search.roles import RoleModel, asked_of
from branchwise.search.webpilot import Subtask, WebPilotPrompts, control_messages, reflect_messages

from fake_models import Call, FakeModel

PAGE = "\n".join(f"[{i}] link 'Product {i}'" for i in range(2000))
MESSAGES = [ChatMessage(role="system", content="You are a browser agent."),
            ChatMessage(role="user", content=f"OBSERVATION:\n{PAGE}\nURL: http://shop\nOBJECTIVE: find the tent")]


def context_limit(chars: int) -> FakeModel:
    """A server that refuses prompts over `chars` characters the way llama.cpp and OpenAI do: HTTP 400."""
    def respond(call: Call) -> str | Exception:
        if sum(len(m.content) for m in call.messages) > chars:
            return LLMError("the request exceeds the available context size", kind="bad_request", status=400,
                            server_message="the request exceeds the available context size")
        return "click [1]"
    return FakeModel(respond)


def test_an_over_long_prompt_is_shrunk_until_it_fits_keeping_both_ends() -> None:
    model = context_limit(20_000)
    completion = asyncio.run(complete_fitting(model, MESSAGES, temperature=0.5))
    assert completion.text == "click [1]"
    sizes = [sum(len(m.content) for m in c.messages) for c in model.calls]
    assert len(sizes) == 3 and sizes[0] > sizes[1] > sizes[2] and sizes[2] <= 20_000
    sent = model.calls[-1].messages
    assert sent[0] == MESSAGES[0]
    assert sent[1].content.startswith("OBSERVATION:\n[0] link 'Product 0'")
    assert sent[1].content.endswith("URL: http://shop\nOBJECTIVE: find the tent")
    assert SHRUNK_MARKER in sent[1].content
    assert all(c.temperature == 0.5 for c in model.calls)


def test_a_prompt_that_never_fits_gives_the_servers_error_after_a_few_tries() -> None:
    model = context_limit(10)
    with pytest.raises(LLMError, match="exceeds the available context"):
        asyncio.run(complete_fitting(model, MESSAGES))
    assert len(model.calls) == MAX_SHRINKS + 1


def test_other_errors_are_not_retried() -> None:
    model = FakeModel.queue(LLMError("bad key", kind="auth", status=401))
    with pytest.raises(LLMError, match="bad key"):
        asyncio.run(complete_fitting(model, MESSAGES))
    assert len(model.calls) == 1


def test_search_roles_shrink_too() -> None:
    model = context_limit(20_000)
    role = RoleModel(model, "policy")
    assert asyncio.run(role.complete(MESSAGES, n=2)).texts == ["click [1]", "click [1]"]


def test_nothing_short_is_left_to_shrink() -> None:
    assert shrink_messages([ChatMessage(role="user", content="hi")]) is None
    assert shrink_messages([]) is None


def counting(chars_per_token: float) -> tuple[list[int], Callable[[Sequence[ChatMessage]], Awaitable[int]]]:
    counted: list[int] = []

    async def count(messages: Sequence[ChatMessage]) -> int:
        counted.append(int(sum(len(m.content) for m in messages) / chars_per_token))
        return counted[-1]
    return counted, count


def test_a_prompt_is_cut_to_the_counted_limit_before_it_is_sent() -> None:
    """Sized from the measured characters per token (3 here, denser than the usual 4), one cut is enough."""
    counted, count = counting(3.0)
    fitted, tokens = asyncio.run(fit_to_context(MESSAGES, 2000, count))
    assert tokens == counted[-1]
    assert counted[0] > 2000 >= counted[-1] and len(counted) == 2
    assert fitted[0] == MESSAGES[0]
    assert fitted[1].content.startswith("OBSERVATION:\n[0] link 'Product 0'")
    assert fitted[1].content.endswith("OBJECTIVE: find the tent") and SHRUNK_MARKER in fitted[1].content


def test_a_prompt_within_the_limit_is_sent_as_it_is() -> None:
    counted, count = counting(4.0)
    assert asyncio.run(fit_to_context(MESSAGES, 100_000, count)) == (MESSAGES, counted[0])
    assert len(counted) == 1


def test_roles_fit_the_prompt_to_the_models_context_without_a_refusal() -> None:
    model = context_limit(20_000)
    small = FakeModel(model.respond, config=LLMConfig(model="fake", context_tokens=4096))
    role = RoleModel(small, "policy")
    assert asyncio.run(role.complete(MESSAGES)).text == "click [1]"
    [call] = small.calls
    sent = sum(len(m.content) // 4 + 4 for m in call.messages)
    assert SHRUNK_MARKER in call.messages[1].content
    assert sent <= 4096 * 0.95 - small.config.max_tokens


def test_a_webpilot_agents_instructions_after_the_page_are_never_cut() -> None:
    """The agents put the page first and their own part last (search/webpilot.py): shrinking cuts the page, never the
    part that says which agent answers and how."""
    messages = control_messages("Cheapest tent?", Subtask("Open Outdoor"), ["click [3]"], "http://shop", PAGE,
                                WebPilotPrompts(max_observation_tokens=100_000))
    _, instructions = split_instructions(messages[1].content)
    assert instructions is not None and instructions.startswith("You are the Controller")
    shrunk = shrink_messages(messages, keep=0.02)
    assert shrunk is not None
    sent = shrunk[1].content
    assert SHRUNK_MARKER in sent and len(sent) < len(messages[1].content) // 10
    assert sent.startswith("Task: Cheapest tent?") and sent.endswith(INSTRUCTIONS_MARK + instructions)


def test_the_call_log_names_each_webpilot_agent_and_each_judge() -> None:
    page, sub, agents = "[1] link 'Outdoor'", Subtask("Open Outdoor"), WebPilotPrompts()
    assert asked_of(control_messages("t", sub, [], "http://shop", page, agents)).startswith(
        "You are the Controller of a web agent.")
    # A model's reflection with a line of dashes in it stays inside the agent's part.
    assert asked_of(reflect_messages("t", sub, "click [1]", "first\n---\nthen", "http://a", "http://b", page,
                                     agents)).startswith("You are the Explorer of a web agent, looking back")
    assert asked_of(MESSAGES) == "You are a browser agent."
