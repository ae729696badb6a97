"""A prompt the model server rejects (HTTP 400, typically over its context) is shrunk and sent again instead of
ending the run; other errors stand."""

from __future__ import annotations

import asyncio

import pytest

from branchwise.chat_model import MAX_SHRINKS, SHRUNK_MARKER, complete_fitting, shrink_messages
from branchwise.llm import ChatMessage, LLMError
from branchwise.search.roles import RoleModel

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
