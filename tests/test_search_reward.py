"""WebOperator's checklist reward model: checklist parsing, the logprob verbalizer and the sampling fallback."""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import pytest

from branchwise.core.usage import Usage
from branchwise.llm import (
    Choice,
    Completion,
    LLMClient,
    LLMConfig,
    LLMError,
    TokenLogprob,
    TopLogprob,
)
from branchwise.scripted_model import Script, ScriptedModelServer
from branchwise.search.reward import (
    RewardConfig,
    build_checklist_messages,
    build_judge_messages,
    generate_checklist,
    label_scores_from_text,
    parse_checklist,
    progress_text,
    score_action,
    verbalize,
)

from fake_models import FakeModel

TokenSpec = str | tuple[str, dict[str, float]]


def tokens(*specs: TokenSpec) -> list[TokenLogprob]:
    """Plain strings are near-certain tokens; (token, {alternative: probability}) gives a position's top list."""
    result: list[TokenLogprob] = []
    for spec in specs:
        if isinstance(spec, str):
            result.append(TokenLogprob(token=spec, logprob=-0.01, top_logprobs=[TopLogprob(token=spec, logprob=-0.01)]))
            continue
        token, alternatives = spec
        top = [TopLogprob(token=t, logprob=math.log(p)) for t, p in alternatives.items()]
        chosen = alternatives.get(token)
        result.append(TokenLogprob(token=token, logprob=math.log(chosen) if chosen else -5.0, top_logprobs=top))
    return result


def line(number: int, label: TokenSpec) -> list[TokenSpec]:
    return ["\n", "Check", "list", " ", str(number), ":", label]


def completion(*choices: Choice) -> Completion:
    return Completion(model="fake", choices=list(choices), usage=Usage(calls=1))


CHECKLIST_ANSWER = """The task needs the profile menu, the status dialog and a save.

Checklist 1: Open the profile menu
- Find the avatar menu that leads to the user's own settings.
Checklist 2: **Set the status text**
- Type "On vacation" into the status field.

Checklist 3: Save the status
- Confirm and check the new status is shown.
Note: the user is already signed in.
"""


def test_parse_checklist_reads_titles_and_descriptions() -> None:
    assert parse_checklist(CHECKLIST_ANSWER) == [
        "Open the profile menu - Find the avatar menu that leads to the user's own settings.",
        'Set the status text - Type "On vacation" into the status field.',
        "Save the status - Confirm and check the new status is shown.",
    ]


def test_parse_checklist_tolerates_markdown_and_inline_descriptions() -> None:
    text = (
        "**Checklist 1:** Search for the item\n  * type the name\n"
        "### Checklist 2 - Open the result\nCHECKLIST 3: Report"
    )
    assert parse_checklist(text) == ["Search for the item - type the name", "Open the result", "Report"]


def test_parse_checklist_falls_back_to_a_numbered_list_and_caps_items() -> None:
    text = "Analysis first.\n1. Find the page\n- it is under Reports\n2) Read the total\n3. Answer"
    assert parse_checklist(text) == ["Find the page - it is under Reports", "Read the total", "Answer"]
    many = "\n".join(f"Checklist {i}: step {i}" for i in range(1, 30))
    assert parse_checklist(many, max_items=4) == ["step 1", "step 2", "step 3", "step 4"]
    assert len(parse_checklist(many)) == RewardConfig().max_checklist_items


def test_parse_checklist_of_nothing_is_empty() -> None:
    assert parse_checklist("") == []
    assert parse_checklist("I cannot help with that.") == []


def test_generate_checklist_uses_the_task_when_nothing_parses() -> None:
    config = RewardConfig()
    model = FakeModel.queue(completion(Choice(text="no list here")))
    assert asyncio.run(generate_checklist(model, config, "Buy milk", "http://x", "obs")) == ["Buy milk"]
    assert model.calls[0].temperature == config.checklist_temperature
    model = FakeModel.queue(completion(Choice(text=CHECKLIST_ANSWER)))
    assert len(asyncio.run(generate_checklist(model, config, "t", "http://x", "obs"))) == 3


def test_checklist_messages_carry_task_url_and_page() -> None:
    messages = build_checklist_messages("Set my {status}", "http://git.test", "[3] link 'Profile'")
    assert [m.role for m in messages] == ["system", "user"]
    assert "Checklist 1: <title>" in messages[0].content
    assert "Set my {status}" in messages[1].content
    assert "http://git.test" in messages[1].content and "[3] link 'Profile'" in messages[1].content


def test_judge_messages_list_items_and_fix_the_answer_format() -> None:
    messages = build_judge_messages(
        "task", ["click [1]", "type [2] [x] [1]"], "obs", ["Open menu", "Save"], "I open it", "click [7]"
    )
    system, user = messages[0].content, messages[1].content
    assert "Checklist 1: Yes\nChecklist 2: In Progress\nChecklist 3: No" in system
    assert "Checklist 1: Open menu\nChecklist 2: Save" in user
    assert "1. click [1]\n2. type [2] [x] [1]" in user
    assert "THOUGHT: I open it\nACTION: click [7]" in user


def test_the_judge_sees_how_the_previous_step_was_judged() -> None:
    first = build_judge_messages("task", [], "obs", ["Open menu", "Save"], "I open it", "click [7]")[1].content
    assert "Milestones as judged at the previous step:\n(none judged yet)" in first
    later = build_judge_messages("task", ["click [7]"], "obs", ["Open menu", "Save"], "I save", "click [9]",
                                 progress=(0.9, 0.4))[1].content
    assert "Milestones as judged at the previous step:\n1. Open menu: Yes\n2. Save: In Progress" in later


@pytest.mark.parametrize(("score", "label"), [(1.0, "Yes"), (0.67, "Yes"), (0.5, "In Progress"), (0.34, "In Progress"),
                                              (0.3, "No"), (0.0, "No")])
def test_progress_labels_split_the_item_score_in_thirds(score: float, label: str) -> None:
    assert progress_text(["**Sort**"], [score]) == f"1. Sort: {label}"


def test_progress_for_another_checklist_is_not_shown() -> None:
    assert progress_text(["a", "b"], [1.0]) == "(none judged yet)"


def test_verbalizer_reads_labels_from_the_final_lines() -> None:
    logprobs = tokens(
        "Summary", ":", " The", " action", " helps", ".",
        *line(1, (" Yes", {" Yes": 0.6, " In": 0.3, " No": 0.1})),
        # " Maybe" is no label: it drops out and the three labels are renormalised.
        *line(2, (" In", {" In": 0.5, " Yes": 0.2, " No": 0.2, " Maybe": 0.1})),
        " Progress",
    )
    scores = verbalize(logprobs, 2)
    assert scores is not None
    assert scores[0] == pytest.approx(0.6 + 0.5 * 0.3)
    assert scores[1] == pytest.approx((0.2 + 0.5 * 0.5) / 0.9)


def test_verbalizer_ignores_label_words_in_the_explanation() -> None:
    # WebOperator's code read the first label-like token, which here is the confident "Yes" in the summary.
    logprobs = tokens(
        "Summary", ":", (" Yes", {" Yes": 0.99, " No": 0.01}), ",", " the", " agent", " says",
        " Check", "list", " 1", ":", (" Yes", {" Yes": 0.98, " No": 0.02}), " but", " it", " is", " wrong", ".",
        *line(1, (" No", {" No": 0.9, " Yes": 0.1})),
    )
    assert verbalize(logprobs, 1) == pytest.approx([0.1])


def test_verbalizer_takes_the_last_line_for_an_item() -> None:
    logprobs = tokens(
        "Draft", ":",
        *line(1, (" Yes", {" Yes": 0.95, " No": 0.05})),
        "\n", "Final", ":",
        *line(1, (" No", {" No": 0.8, " In": 0.2})),
    )
    assert verbalize(logprobs, 1) == pytest.approx([0.1])


def test_verbalizer_merges_spelling_variants_and_zeroes_missing_labels() -> None:
    variants = tokens(*line(1, (" Yes", {" Yes": 0.3, "Yes": 0.2, " yes": 0.1, " No": 0.4})))
    assert verbalize(variants, 1) == pytest.approx([0.6])
    # Neither "In" nor "No" listed: P(Yes) = 1 after renormalising over the labels that are present.
    only_yes = tokens(*line(1, (" Yes", {" Yes": 0.3, " Sure": 0.6, " OK": 0.1})))
    assert verbalize(only_yes, 1) == pytest.approx([1.0])
    # A server that lists no alternatives still gives the sampled token.
    bare = [*tokens(*line(1, "x"))[:-1], TokenLogprob(token=" In", logprob=-0.2, top_logprobs=[])]
    assert verbalize([*bare, *tokens(" Progress")], 1) == pytest.approx([0.5])


def test_verbalizer_handles_markdown_around_the_label() -> None:
    logprobs = tokens(
        "ok", "\n", "**", "Check", "list", " ", "1", ":**", " **", ("Yes", {"Yes": 0.7, "In": 0.2, "No": 0.1}), "**"
    )
    assert verbalize(logprobs, 1) == pytest.approx([0.8])


def test_verbalizer_softmax_matches_hand_computation() -> None:
    raw = {" Yes": -1.2, " In": -0.7, " No": -2.5, " Hmm": -0.3}
    top = [TopLogprob(token=t, logprob=v) for t, v in raw.items()]
    token = TokenLogprob(token=" In", logprob=-0.7, top_logprobs=top)
    logprobs = [*tokens("Checklist", " 1", ":"), token, *tokens(" Progress")]
    exp = {t: math.exp(v) for t, v in raw.items() if t != " Hmm"}
    expected = (exp[" Yes"] + 0.5 * exp[" In"]) / sum(exp.values())
    assert verbalize(logprobs, 1) == pytest.approx([expected])


def test_verbalizer_returns_none_without_label_positions() -> None:
    one_line = tokens("Summary", ".", *line(1, " Yes"))
    assert verbalize(one_line, 2) is None
    assert verbalize([], 1) is None
    assert verbalize(one_line, 0) is None
    # The label is split so that no alternative at its first token is a label.
    split = tokens(*line(1, (" Y", {" Y": 0.9, " N": 0.1})), "es")
    assert verbalize(split, 1) is None
    explanation_only = tokens("I", " would", " say", (" Yes", {" Yes": 0.9, " No": 0.1}), ".")
    assert verbalize(explanation_only, 1) is None


def test_label_scores_from_text() -> None:
    text = "The step helps.\nChecklist 1: Yes\nChecklist 2: in-progress\n- Checklist 3: **NO**\nChecklist 4: Yes"
    assert label_scores_from_text(text, 3) == [1.0, 0.5, 0.0]
    assert label_scores_from_text("Checklist 1: Yes", 2) is None
    assert label_scores_from_text("Checklist 1: Perhaps", 1) is None
    assert label_scores_from_text("It says Checklist 1: Yes inline.", 1) is None


ITEMS = ["Open the menu", "Save"]


def test_score_action_uses_logprobs_when_the_server_sends_them() -> None:
    logprobs = tokens(
        "Fine", ".", *line(1, (" Yes", {" Yes": 0.8, " No": 0.2})), *line(2, (" No", {" No": 0.6, " In": 0.4}))
    )
    text = "".join(t.token for t in logprobs)
    model = FakeModel.queue(completion(Choice(text=text, logprobs=logprobs)))
    score = asyncio.run(score_action(model, RewardConfig(), "task", [], "obs", ITEMS, "thought", "click [3]"))
    assert score.method == "logprobs"
    assert score.item_scores == pytest.approx((0.8, 0.2))
    assert score.reward == pytest.approx(0.5)
    [call] = model.calls
    assert (call.logprobs, call.top_logprobs, call.n, call.temperature) == (True, 10, 1, 1.0)


def test_score_action_samples_when_logprobs_are_absent() -> None:
    first = Choice(text="ok\nChecklist 1: Yes\nChecklist 2: No")
    more = [
        Choice(text="ok\nChecklist 1: Yes\nChecklist 2: In Progress"),
        Choice(text="unreadable"),
        Choice(text="ok\nChecklist 1: No\nChecklist 2: In Progress"),
        Choice(text="ok\nChecklist 1: Yes\nChecklist 2: No"),
    ]
    model = FakeModel.queue(completion(first), completion(*more))
    score = asyncio.run(score_action(model, RewardConfig(), "task", ["click [1]"], "obs", ITEMS, "t", "click [3]"))
    assert score.method == "sampling"
    assert score.item_scores == pytest.approx((0.75, 0.25))
    assert score.reward == pytest.approx(0.5)
    assert len(score.samples) == 5
    # The logprobs answer counts as the first of the n_fallback samples; the rest come from ONE call with n.
    assert [(c.n, c.logprobs) for c in model.calls] == [(1, True), (4, False)]


def test_score_action_samples_when_the_server_rejects_logprobs() -> None:
    refusal = LLMError("no logprobs here", kind="bad_request", status=400)
    model = FakeModel.queue(refusal, completion(*[Choice(text="Checklist 1: In Progress\nChecklist 2: Yes")] * 5))
    score = asyncio.run(score_action(model, RewardConfig(), "task", [], "obs", ITEMS, "t", "click [3]"))
    assert score.method == "sampling"
    assert score.reward == pytest.approx(0.75)
    assert model.calls[1].n == 5


def test_score_action_with_nothing_readable_is_zero(caplog: pytest.LogCaptureFixture) -> None:
    model = FakeModel.queue(completion(Choice(text="hmm")), completion(*[Choice(text="no idea")] * 4))
    with caplog.at_level(logging.WARNING, logger="branchwise.search.reward"):
        score = asyncio.run(score_action(model, RewardConfig(), "task", [], "obs", ITEMS, "t", "click [3]"))
    assert (score.method, score.reward, score.item_scores) == ("unparseable", 0.0, ())
    assert any("reward 0.0" in r.getMessage() for r in caplog.records)


def test_score_action_over_http_with_scripted_logprobs() -> None:
    final: list[dict[str, Any]] = [
        {"token": "\n", "logprob": -0.01},
        {"token": "Checklist", "logprob": -0.01},
        {"token": " 1", "logprob": -0.01},
        {"token": ":", "logprob": -0.01},
        {
            "token": " Yes",
            "logprob": math.log(0.7),
            "top_logprobs": [
                {"token": " Yes", "logprob": math.log(0.7)},
                {"token": " In", "logprob": math.log(0.2)},
                {"token": " No", "logprob": math.log(0.1)},
            ],
        },
    ]
    # A "No" in the summary with a confident top list: reading it would give a reward near 0.
    summary: list[dict[str, Any]] = [
        {"token": "Summary", "logprob": -0.01},
        {"token": ":", "logprob": -0.01},
        {"token": " No", "logprob": -0.01, "top_logprobs": [{"token": " No", "logprob": -0.01}]},
        {"token": " problem", "logprob": -0.01},
        {"token": ".", "logprob": -0.01},
    ]
    logprobs = summary + final
    text = "".join(t["token"] for t in logprobs)
    script = Script.model_validate(
        {"rules": [{"when_contains": ["Proposed step"], "reply": {"text": text, "logprobs": logprobs}}]}
    )

    async def run(base_url: str) -> Any:
        async with LLMClient(LLMConfig(base_url=base_url, model="scripted", max_retries=0)) as client:
            return await score_action(client, RewardConfig(), "task", [], "obs", ["Open menu"], "t", "click [3]")

    with ScriptedModelServer(script) as server:
        score = asyncio.run(run(server.base_url))
        request = server.last_request
    assert score.method == "logprobs"
    assert score.reward == pytest.approx(0.7 + 0.5 * 0.2)
    assert (request.logprobs, request.top_logprobs, request.temperature) == (True, 10, 1.0)
