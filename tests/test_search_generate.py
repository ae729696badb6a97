"""Candidate generation: history windows, per-variation prompts and the parse/validate retry loop."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from branchwise.actions import Click, Type
from branchwise.llm import LLMConfig
from branchwise.observation import PageView
from branchwise.policy.prompts import PromptConfig
from branchwise.search.candidates import Candidate
from branchwise.search.examples import Example, examples_block
from branchwise.search.generate import (
    DEFAULT_VARIATIONS,
    GenerationConfig,
    GenerationFailure,
    GenerationInput,
    HistoryEntry,
    Variation,
    generate_candidates,
    history_text,
    variation_messages,
)
from branchwise.search.roles import RoleModel

from fake_models import Call, FakeModel
from pageviews import page

VIEW = page(("searchbox", "Search"), ("button", "Go"))
BLOCK = "Subgoals:\n- search for shoes"
MISSING = "there is no element [42] on this page; use an id from the observation"


def steps(count: int) -> list[HistoryEntry]:
    """Steps 1..count: 'click [100+i]', having seen 'page i'."""
    return [HistoryEntry(summary=f"page {i}", action=f"click [{100 + i}]") for i in range(1, count + 1)]


def data(history: int = 0, rephrased_block: str = BLOCK) -> GenerationInput:
    return GenerationInput(task="Find running shoes", observation=VIEW.text, url=VIEW.url, history=steps(history),
                           rephrased_block=rephrased_block)


def answer(action: str, thought: str = "The search box is [1].") -> str:
    return f"Let's think step-by-step. {thought} In summary, the next action I will perform is ```{action}```"


def generate(
    fake: FakeModel, config: GenerationConfig, view: PageView | None = VIEW, history: int = 0,
) -> tuple[list[Candidate], list[GenerationFailure]]:
    return asyncio.run(generate_candidates(RoleModel(fake, "policy"), data(history), config, view))


def rephrased(call: Call) -> bool:
    """Whether the call comes from the rephrased variation (its prompt, and so every retry, has the block)."""
    return any(BLOCK in m.content for m in call.messages)


def single(max_retries: int = 5) -> GenerationConfig:
    """One variation, named 'only'."""
    return GenerationConfig(variations=(Variation(name="only", history=2),), max_retries=max_retries)


def test_history_text_numbers_the_last_entries_by_their_step() -> None:
    assert history_text(steps(7), 3) == (
        "\n5. click [105] (seen: page 5)\n6. click [106] (seen: page 6)\n7. click [107] (seen: page 7)"
    )
    assert history_text(steps(2), 5) == "\n1. click [101] (seen: page 1)\n2. click [102] (seen: page 2)"


def test_history_text_without_summary_shows_only_the_action() -> None:
    assert history_text([HistoryEntry(summary="", action="scroll [down]")], 1) == "\n1. scroll [down]"


def test_history_text_is_none_when_nothing_is_shown() -> None:
    assert history_text(steps(4), 0) is None
    assert history_text([], 3) is None


def test_only_the_rephrased_variation_sees_the_rephrased_task() -> None:
    config = GenerationConfig()
    prompts = {v.name: variation_messages(data(), v, config)[-1].content for v in DEFAULT_VARIATIONS}
    assert f"OBJECTIVE: Find running shoes\n{BLOCK}" in prompts["rephrased"]
    assert BLOCK not in prompts["history-5"] and BLOCK not in prompts["history-4"]
    assert "OBJECTIVE: Find running shoes\nPREVIOUS ACTION" in prompts["history-5"]
    # Without a block the rephrased variation asks with the task alone.
    rephrased = DEFAULT_VARIATIONS[1]
    assert variation_messages(data(rephrased_block=""), rephrased, config)[-1].content == prompts["history-5"]


def test_every_variation_is_told_what_the_page_does_not_allow() -> None:
    told = dataclasses.replace(data(), unavailable=("go_back (there is no previous page)",))
    for variation in DEFAULT_VARIATIONS:
        prompt = variation_messages(told, variation, GenerationConfig())[-1].content
        assert f"URL: {VIEW.url}\nNOT POSSIBLE HERE: go_back (there is no previous page)\nOBJECTIVE: " in prompt


@pytest.mark.parametrize(("variation", "first_shown"), [(v, 8 - v.history) for v in DEFAULT_VARIATIONS])
def test_each_variation_shows_its_own_history_window(variation: Variation, first_shown: int) -> None:
    prompt = variation_messages(data(history=7), variation, GenerationConfig())[-1].content
    assert prompt.endswith("\n7. click [107] (seen: page 7)")
    assert f"\n{first_shown}. click [{100 + first_shown}]" in prompt
    assert f"click [{99 + first_shown}]" not in prompt


def test_the_page_and_url_are_in_every_prompt() -> None:
    prompt = variation_messages(data(), DEFAULT_VARIATIONS[0], GenerationConfig())[-1].content
    assert f"OBSERVATION:\n{VIEW.text}\nURL: {VIEW.url}" in prompt
    assert prompt.endswith("PREVIOUS ACTION: None")


def test_an_unparseable_answer_is_sent_back_with_the_parse_error() -> None:
    fake = FakeModel.queue("I am not sure.", answer("type [1] [shoes] [1]"))
    config = single()
    candidates, failures = generate(fake, config)
    assert failures == []
    assert candidates == [Candidate(Type(1, "shoes", True), "type [1] [shoes] [1]",
                                    "Let's think step-by-step. The search box is [1].", sources=("only",))]
    first, retry = fake.calls
    assert retry.messages[:-2] == first.messages
    assert (retry.messages[-2].role, retry.messages[-2].content) == ("assistant", "I am not sure.")
    assert retry.messages[-1].role == "user"
    assert retry.last.startswith("your answer has no valid action: No action found. End your reply with: In summary, "
                                 "the next action I will perform is ```click [12]```. Valid actions: click [id]")
    assert retry.last.endswith(". Give one valid action in the same format.")
    # WebOperator's generation temperature.
    assert [c.temperature for c in fake.calls] == [0.7] * 2


def test_an_action_that_keeps_failing_validation_gives_a_failure() -> None:
    fake = FakeModel.always(answer("click [42]"))
    config = single()
    candidates, failures = generate(fake, config)
    assert candidates == []
    assert failures == [GenerationFailure("only", (f"`click [42]` cannot be done: {MISSING}",) * 5)]
    assert len(fake.calls) == config.max_retries == 5
    # Each retry carries every earlier answer and the reason it was refused.
    assert [len(c.messages) for c in fake.calls] == [len(fake.calls[0].messages) + 2 * i for i in range(5)]
    assert fake.calls[-1].last == f"`click [42]` cannot be done: {MISSING}. Give one valid action in the same format."


def test_each_mistake_is_counted_for_the_role_by_kind() -> None:
    """An unreadable answer, an id the page does not have and a run-on answer (its first action taken) are each
    counted; the valid first action of the run-on answer is the candidate."""
    fake = FakeModel.queue("I am not sure.", answer("click [42]"), answer("type [1] [shoes] [1] click [2]"))
    role = RoleModel(fake, "policy")
    candidates, _ = asyncio.run(generate_candidates(role, data(), single(), VIEW))
    assert [c.action for c in candidates] == [Type(1, "shoes", True)]
    assert dict(role.mistakes) == {"unparseable": 1, "unknown_element": 1, "several_actions": 1}


def test_a_click_on_a_heading_around_two_links_is_refused_and_the_model_told_them() -> None:
    view = page(("heading", "Running shoes"), ("link", "Trail"), ("link", "Road"), children={1: (2, 3)}, inert={1})
    fake = FakeModel.queue(answer("click [1]"), answer("click [2]"))
    role = RoleModel(fake, "policy")
    inputs = dataclasses.replace(data(), observation=view.text)
    candidates, _ = asyncio.run(generate_candidates(role, inputs, single(), view))
    assert [c.action for c in candidates] == [Click(2)]
    assert fake.calls[1].last.startswith("`click [1]` cannot be done: [1] heading 'Running shoes' is not a link, "
                                         "button or other control, so a click on it does nothing; the controls "
                                         "inside it: [2] link 'Trail', [3] link 'Road'")
    assert dict(role.mistakes) == {"inert_click": 1}


def test_a_click_on_a_heading_around_one_link_is_that_link_without_asking_again() -> None:
    view = page(("heading", "Running shoes"), ("link", "Running shoes"), children={1: (2,)}, inert={1})
    fake = FakeModel.queue(answer("click [1]"))
    role = RoleModel(fake, "policy")
    inputs = dataclasses.replace(data(), observation=view.text)
    candidates, _ = asyncio.run(generate_candidates(role, inputs, single(), view))
    assert [(c.action, c.action_text) for c in candidates] == [(Click(2), "click [2]")]
    assert len(fake.calls) == 1 and dict(role.mistakes) == {"retargeted": 1}


def test_max_retries_bounds_the_calls() -> None:
    fake = FakeModel.always("no idea")
    _, [failure] = generate(fake, single(max_retries=2))
    assert len(fake.calls) == 2 and len(failure.errors) == 2
    assert all(error.startswith("your answer has no valid action: ") for error in failure.errors)


def test_each_variation_gives_a_candidate_named_after_it() -> None:
    def respond(call: Call) -> str:
        return answer("click [2]") if rephrased(call) else answer("type [1] [shoes] [1]")

    fake = FakeModel(respond)
    candidates, failures = generate(fake, GenerationConfig(), history=6)
    assert failures == []
    assert [(c.sources, c.action) for c in candidates] == [
        (("history-5",), Type(1, "shoes", True)),
        (("rephrased",), Click(2)),
        (("history-4",), Type(1, "shoes", True)),
    ]
    assert len(fake.calls) == len(DEFAULT_VARIATIONS)


def test_a_failing_variation_does_not_stop_the_others() -> None:
    def respond(call: Call) -> str:
        return answer("click [2]") if rephrased(call) else answer("click [42]")

    config = GenerationConfig(variations=(Variation(name="plain", history=0),
                                          Variation(name="rephrased", history=0, rephrased=True)))
    fake = FakeModel(respond)
    candidates, failures = generate(fake, config)
    assert [(c.sources, c.action_text) for c in candidates] == [(("rephrased",), "click [2]")]
    assert [(f.variation, len(f.errors)) for f in failures] == [("plain", 5)]
    assert len(fake.calls) == 1 + 5


def test_without_a_page_only_parsing_is_checked() -> None:
    fake = FakeModel.always(answer("click [42]"))
    candidates, failures = generate(fake, single(), view=None)
    assert failures == [] and [c.action for c in candidates] == [Click(42)]
    assert len(fake.calls) == 1


class DeadAddresses:
    """A UrlCheck that knows which addresses fail, and counts what it was asked."""

    def __init__(self, dead: dict[str, str]) -> None:
        self.dead = dead
        self.asked: list[str] = []

    async def check(self, url: str) -> str | None:
        self.asked.append(url)
        return self.dead.get(url)


def test_a_goto_whose_address_fails_is_sent_back_with_the_reason() -> None:
    fake = FakeModel.queue(answer("goto [http://shop.example/nope]"), answer("goto [http://shop.example/garden]"))
    check = DeadAddresses({"http://shop.example/nope": "http://shop.example/nope answers HTTP 404"})
    candidates, failures = asyncio.run(generate_candidates(RoleModel(fake, "policy"), data(), single(), VIEW, check))
    assert failures == []
    assert [c.action_text for c in candidates] == ["goto [http://shop.example/garden]"]
    assert fake.calls[1].last == ("`goto [http://shop.example/nope]` cannot be done: http://shop.example/nope answers "
                                  "HTTP 404. Give one valid action in the same format.")
    assert check.asked == ["http://shop.example/nope", "http://shop.example/garden"]


def test_only_addresses_are_checked_and_only_after_the_page_checks_pass() -> None:
    fake = FakeModel.queue(answer("goto [file:///etc/passwd]"), answer("click [1]"))
    check = DeadAddresses({})
    candidates, _ = asyncio.run(generate_candidates(RoleModel(fake, "policy"), data(), single(), VIEW, check))
    assert [c.action_text for c in candidates] == ["click [1]"]
    assert check.asked == []


def test_history_and_retrieved_examples_stay_within_their_budgets_newest_and_most_similar_first() -> None:
    long_steps = [HistoryEntry(summary="s" * 300, action=f"click [{100 + i}]") for i in range(1, 6)]
    examples = examples_block([Example(f"task {i}", f"http://site/{i}", "t" * 200, f"click [{i}]", 1 - i / 10)
                               for i in range(1, 6)])
    prompt = PromptConfig().fitted(LLMConfig(context_tokens=4096))  # history 200 tokens, examples 300
    data = GenerationInput(task="Find running shoes", observation=VIEW.text, url=VIEW.url, history=long_steps,
                           examples_block=examples)
    [*_, user] = variation_messages(data, Variation(name="x", history=5, examples=True),
                                    GenerationConfig(prompt=prompt))
    history = user.content.split("PREVIOUS ACTION:")[1]
    assert len(history) <= 200 * 4 + 1 and "5. click [105]" in history and "1. click [101]" not in history
    assert "earlier actions not shown" in history
    shown = user.content.split("OBJECTIVE: ")[1].split("\nPREVIOUS ACTION:")[0]
    assert "1. Task: task 1" in shown and "5. Task: task 5" not in shown  # the least similar go first
    assert len(shown) - len("Find running shoes\n") <= 300 * 4


def test_at_the_default_context_weboperators_five_steps_and_five_examples_are_shown_whole() -> None:
    full_steps = [HistoryEntry(summary="s" * 240, action=f"click [{100 + i}]") for i in range(1, 6)]
    examples = examples_block([Example("Find the cheapest red mug in the kitchen section", "http://shop.test/kitchen/mugs",
                                       "t" * 240, f"click [{i}]", 1 - i / 10) for i in range(1, 6)])
    data = GenerationInput(task="Find running shoes", observation=VIEW.text, url=VIEW.url, history=full_steps,
                           examples_block=examples)
    prompt = PromptConfig().fitted(LLMConfig(context_tokens=8192))
    [*_, user] = variation_messages(data, Variation(name="x", history=5, examples=True),
                                    GenerationConfig(prompt=prompt))
    assert "not shown" not in user.content and "1. click [101]" in user.content
    assert examples in user.content
