"""The Koh et al. value function: verdict parsing, averaging over samples, and the prompt it sends."""

from __future__ import annotations

import asyncio
import logging

import pytest

from branchwise.chat_model import ChatModel
from branchwise.search.value import (
    NO_ANSWER,
    NO_HISTORY,
    ValueConfig,
    aggregate_values,
    build_value_messages,
    parse_value,
    score_state,
)

from fake_models import FakeModel


def verdict(status: str, on_track: str) -> str:
    return f"Thoughts: looked at the page.\nStatus: {status}\nOn the right track to success: {on_track}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (verdict("success", "no"), 1.0),
        (verdict("failure", "yes"), 0.5),
        (verdict("failure", "no"), 0.0),
        ('Thoughts: x\n**Status:** "Success"\n**On the right track to success:** "no"', 1.0),
        ("Thoughts: x\n**Status**: “failure”\n- On the right track to success: “Yes”", 0.5),
        ("thoughts: x\nSTATUS :   FAILURE\non the right track to success :  YES.", 0.5),
        ("Thoughts: x\n## Status: failed\nOn the right track: no", 0.0),
        ("Thoughts: x\nStatus: failure", 0.0),  # no on-track line: not on track, as in the paper's code
        ("Thoughts: x\nStatus:failure\nOn the right track towards success:yes", 0.5),
    ],
)
def test_parse_value_reads_tolerant_verdicts(text: str, expected: float) -> None:
    assert parse_value(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I think the agent did fine.",
        "Thoughts: x\nStatus: unclear\nOn the right track to success: yes",
        # The status has to start a line; a mention inside the reasoning is not a verdict.
        "Thoughts: the format wants Status: success when done.\nOn the right track to success: yes",
    ],
)
def test_parse_value_returns_none_without_a_readable_status(text: str) -> None:
    assert parse_value(text) is None


def test_parse_value_takes_the_last_status_line() -> None:
    text = "Thoughts: a draft:\nStatus: success\nOn second look the order was not placed.\n" + verdict("failure", "no")
    assert parse_value(text) == 0.0


def test_aggregate_counts_unreadable_samples_as_failure() -> None:
    assert aggregate_values([1.0, None, 0.5, 0.0, None]) == pytest.approx(0.3)
    assert aggregate_values([0.5]) == 0.5


def test_one_success_among_unreadable_answers_is_not_a_success() -> None:
    assert aggregate_values([1.0] + [None] * 19) == pytest.approx(0.05)


def test_aggregate_of_nothing_readable_is_zero_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="branchwise.search.value"):
        assert aggregate_values([None, None]) == 0.0
        assert aggregate_values([]) == 0.0
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 2


def test_messages_carry_task_history_answer_url_and_page() -> None:
    messages = build_value_messages(
        "Find the {cheapest} printer",
        "[12] link 'Printers'",
        "http://shop.test/p",
        ["click [5]", "scroll [down]"],
        None,
    )
    assert [m.role for m in messages] == ["system", "user"]
    assert "Status: success OR failure" in messages[0].content
    assert "On the right track to success: yes OR no" in messages[0].content
    user = messages[1].content
    # Braces in the task are text, not placeholders.
    assert "Find the {cheapest} printer" in user
    assert "1. click [5]\n2. scroll [down]" in user
    assert "http://shop.test/p" in user and "[12] link 'Printers'" in user
    assert NO_ANSWER in user
    with_answer = build_value_messages("t", "obs", "http://x", [], "$279.49")[1].content
    assert "$279.49" in with_answer and NO_HISTORY in with_answer


def test_a_long_history_keeps_its_latest_actions_within_the_budget() -> None:
    actions = [f"type [{i}] [{'a long query ' * 5}] [1]" for i in range(1, 41)]
    user = build_value_messages("t", "obs", "http://x", actions, None, config=ValueConfig(max_history_tokens=100))[1]
    assert "40. type [40]" in user.content and "1. type [1]" not in user.content
    kept = [line for line in user.content.splitlines() if line[:1].isdigit() and ". type [" in line]
    assert f"({40 - len(kept)} earlier actions not shown)" in user.content
    assert sum(len(line) + 1 for line in kept) <= 100 * 4


def test_long_observations_are_truncated() -> None:
    config = ValueConfig(max_observation_tokens=10)
    page = "\n".join(f"[{i}] StaticText 'line {i}'" for i in range(200))
    user = build_value_messages("t", page, "http://x", [], None, config=config)[1].content
    assert "[199]" not in user and "truncated" in user


def test_score_state_averages_n_samples_from_one_call() -> None:
    texts = [verdict("success", "no"), verdict("failure", "yes"), "garbage", verdict("failure", "no")]
    model = FakeModel.always(*texts)
    protocol_typed: ChatModel = model
    config = ValueConfig(n=4, keep_text_chars=20)
    score = asyncio.run(score_state(protocol_typed, config, "task", "obs", "http://x", ["click [1]"], None))
    [call] = model.calls
    # Koh et al. sample the value function at T=1.0 with top_p 1.0.
    assert (call.n, call.temperature, call.top_p, call.max_tokens) == (4, 1.0, 1.0, config.max_tokens)
    assert score.samples == (1.0, 0.5, None, 0.0)
    assert score.parsed == 3
    assert score.value == pytest.approx(0.375)
    assert all(len(t) <= 20 for t in score.texts) and len(score.texts) == 4


def test_default_config_follows_the_paper() -> None:
    config = ValueConfig()
    assert (config.n, config.temperature) == (20, 1.0)
