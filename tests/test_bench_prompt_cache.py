"""The prompt-cache benchmark's calls (bench/prompt_cache.py): the baseline really puts each judge's own text first,
and only the page-first layout lets the judges of one page share it."""

from __future__ import annotations

import os

from branchwise.bench.prompt_cache import catalogue, node_calls
from branchwise.llm import ChatMessage


def _text(messages: list[ChatMessage]) -> str:
    return "\n".join(m.content for m in messages)


def test_the_judges_of_a_node_share_the_page_only_when_it_comes_first() -> None:
    for layout, shared_page in (("page first", True), ("agent first", False)):
        calls = node_calls(2, layout)
        assert [(node, role) for node, role, _ in calls] == [
            (n, r) for n in (0, 1) for r in ("explorer", "reflect", "appraise", "control")]
        judges = [_text(messages) for node, role, messages in calls if node == 0 and role != "explorer"]
        child = catalogue(1)
        assert all(child in text for text in judges)
        assert (child in os.path.commonprefix(judges)) is shared_page, layout


def test_the_baseline_asks_the_same_as_the_page_first_prompts() -> None:
    page_first, agent_first = node_calls(1, "page first"), node_calls(1, "agent first")
    for (_, role, ours), (_, _, theirs) in zip(page_first, agent_first, strict=True):
        if role == "explorer":
            assert ours == theirs
        else:
            assert theirs[0].content.startswith("You are the ") and theirs[0].content in ours[1].content
            assert theirs[1].content in ours[1].content


def test_catalogue_pages_differ_and_fill_most_of_an_observation() -> None:
    assert catalogue(0) != catalogue(1)
    assert 8_000 < len(catalogue(0)) < 15_360
