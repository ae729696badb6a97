"""Retrieved past examples: which past steps the store offers, how they are ranked against the current task and page,
and how the retrieval variation shows them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from branchwise.search.examples import (
    Example,
    ExampleIndex,
    RetrievalConfig,
    examples_block,
    fit_examples,
    load_examples,
    site_key,
    site_of,
)
from branchwise.search.generate import DEFAULT_VARIATIONS, GenerationConfig, GenerationInput, variation_messages
from branchwise.store import DemonstrationRecord, DemoStep, NodeRecord, RunRecord, RunStore, TrajectoryStep

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
GARDEN = "[1] link 'Garden'\n[2] link 'Kitchen'\n[3] searchbox 'Search products'"
SORTABLE = "[7] combobox 'Sort by'\n[8] button 'Sort'\n[9] link 'Rake $12.00'"
ACCOUNT = "[4] link 'Orders'\n[5] link 'Addresses'\n[6] button 'Sign out'"


def step(task: str, page: str, action: str, run_id: str = "r1", position: int = 1) -> TrajectoryStep:
    return TrajectoryStep(run_id=run_id, task=task, position=position, url=f"http://shop.test/{run_id}/{position}",
                          observation_text=page, thought=f"I do {action}.", action_text=action)


POOL = [
    step("What is the cheapest product in the Garden category?", GARDEN, "click [1]", "r1", 1),
    step("What is the cheapest product in the Garden category?", SORTABLE, "select_option [7] [Price: low to high]",
         "r1", 2),
    step("Show my last order", ACCOUNT, "click [4]", "r2", 1),
]


def test_the_step_with_the_same_goal_and_page_comes_first() -> None:
    index = ExampleIndex(POOL)
    found = index.top("What is the cheapest product in the Kitchen category?", GARDEN)
    assert [e.action for e in found][:2] == ["click [1]", "select_option [7] [Price: low to high]"]
    assert found[0].score > found[1].score


def test_the_page_decides_between_steps_of_the_same_task() -> None:
    found = ExampleIndex(POOL).top("What is the cheapest product in the Garden category?", SORTABLE)
    assert found[0].action == "select_option [7] [Price: low to high]"


def test_nothing_in_common_means_no_example() -> None:
    assert ExampleIndex(POOL).top("Wetter morgen", "[1] heading 'Zürich'") == []


def test_k_bounds_the_examples_and_zero_turns_retrieval_off() -> None:
    assert len(ExampleIndex(POOL, RetrievalConfig(k=1)).top("cheapest product order", GARDEN + ACCOUNT)) == 1
    assert ExampleIndex(POOL, RetrievalConfig(k=0)).top("cheapest product", GARDEN) == []


def test_the_same_step_from_several_runs_is_one_example() -> None:
    again = [s.model_copy(update={"run_id": "r3"}) for s in POOL[:1]]
    index = ExampleIndex([*POOL, *again])
    assert len(index) == 3 and index.runs == 3


def test_an_empty_pool_retrieves_nothing() -> None:
    assert ExampleIndex([]).top("anything", GARDEN) == []


def test_the_block_names_the_task_page_thought_and_action_and_warns_about_ids() -> None:
    block = examples_block([Example("Show my last order", "http://shop.test/account", "Orders are listed there.",
                                    "click [4]", 0.8)])
    assert block.splitlines() == [
        "Steps that worked on similar tasks before (their element ids belong to other pages; use the ids of this "
        "page):",
        "1. Task: Show my last order",
        "   Page: http://shop.test/account",
        "   Thought: Orders are listed there.",
        "   Action: click [4]",
    ]
    assert examples_block([]) == ""


def test_only_the_retrieval_variation_shows_the_examples() -> None:
    block = examples_block(ExampleIndex(POOL).top("cheapest Garden product", GARDEN))
    data = GenerationInput(task="cheapest Garden product", observation=GARDEN, url="http://shop.test/", history=[],
                           examples_block=block)
    prompts = {v.name: variation_messages(data, v, GenerationConfig())[-1].content for v in DEFAULT_VARIATIONS}
    assert [name for name, prompt in prompts.items() if "Steps that worked on similar tasks" in prompt] == ["history-4"]


def record_run(store: RunStore, run_id: str, task: str, status: str, path: list[tuple[str, str]],
               started: int) -> None:
    """A run whose chosen path visits `path` = [(page text, action that led there)], root first."""
    store.start_run(RunRecord(run_id=run_id, task=task, started_at=T0 + timedelta(minutes=started)))
    for node_id, (page, action) in enumerate(path):
        store.upsert_node(NodeRecord(run_id=run_id, node_id=node_id, parent_id=node_id - 1 if node_id else None,
                                     url=f"http://shop.test/{run_id}/{node_id}", observation_text=page,
                                     action_text=action, thought=f"thought {node_id}"))
    store.set_trajectory(run_id, list(range(len(path))))
    if status != "running":
        store.finish_run(run_id, status, answer="$1.00" if status == "finished" else "")  # type: ignore[arg-type]


def test_the_store_offers_each_step_of_finished_runs_with_the_page_it_was_taken_on(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        record_run(store, "old", "task old", "finished", [("home", ""), ("garden", "click [1]")], 0)
        record_run(store, "failed", "task failed", "failed", [("home", ""), ("x", "click [9]")], 1)
        record_run(store, "live", "task live", "running", [("home", ""), ("y", "click [8]")], 2)
        record_run(store, "new", "task new", "finished",
                   [("home", ""), ("garden", "click [1]"), ("sorted", "stop [$1.00]")], 3)
        record_run(store, "me", "task me", "finished", [("home", ""), ("z", "click [5]")], 4)
        steps = store.finished_trajectories(exclude_run="me")
        assert [(s.run_id, s.position, s.observation_text, s.action_text) for s in steps] == [
            ("old", 1, "home", "click [1]"),
            ("new", 1, "home", "click [1]"),
            ("new", 2, "garden", "stop [$1.00]"),
        ]
        assert steps[0].url == "http://shop.test/old/0" and steps[0].thought == "thought 1"
        assert [s.run_id for s in store.finished_trajectories(runs=1, exclude_run="me")] == ["new", "new"]

        index = asyncio.run(load_examples(store, RetrievalConfig(), "me"))
        assert index is not None and len(index) == 3 and index.runs == 2
        assert asyncio.run(load_examples(store, RetrievalConfig(k=0), "me")) is None


def test_a_store_that_cannot_be_read_gives_no_examples(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    store.close()
    assert asyncio.run(load_examples(store, RetrievalConfig(), "me")) is None
    assert "could not read past runs" in caplog.text


def test_examples_that_do_not_fit_are_left_out_least_similar_first() -> None:
    block = examples_block([Example(f"task {i}", "http://shop.test/", "x" * 100, f"click [{i}]", 1.0) for i in (1, 2)])
    assert fit_examples(block, len(block)) == block
    first = fit_examples(block, len(block) - 1)
    assert "1. Task: task 1" in first and "task 2" not in first
    assert fit_examples(block, 50) == ""


def test_the_sites_demonstrations_join_the_pool_and_another_sites_do_not(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        store.add_demonstration(DemonstrationRecord(
            site="shop.test", instruction="Sort the Garden products by price", score=5,
            steps=[DemoStep(url="http://shop.test/garden", observation_text=SORTABLE, thought="Sort them.",
                            action_text="select_option [7] [Price: low to high]"),
                   DemoStep(url="http://shop.test/garden?sort=price", action_text="stop [sorted]")]))
        store.add_demonstration(DemonstrationRecord(
            site="forum.test", instruction="Sort the forum posts by date", score=5,
            steps=[DemoStep(url="http://forum.test/", observation_text=SORTABLE, action_text="click [8]")]))
        index = asyncio.run(load_examples(store, RetrievalConfig(), "me", site="shop.test"))
        assert index is not None and len(index) == 2
        top = index.top("What is the cheapest Garden product? Sort by price.", SORTABLE)
        assert top[0].goal == "Sort the Garden products by price"
        assert top[0].action == "select_option [7] [Price: low to high]"
        assert all("forum" not in e.goal for e in top)
        # Without a site, only finished runs (none here).
        nothing = asyncio.run(load_examples(store, RetrievalConfig(), "me"))
        assert nothing is not None and len(nothing) == 0


def test_a_site_is_the_host_and_port_of_the_address() -> None:
    assert site_of("http://127.0.0.1:8080/garden?x=1") == "127.0.0.1:8080"
    assert site_of("https://Shop.Example/") == "shop.example"
    assert site_of("about:blank") == ""


def test_a_site_is_the_same_with_or_without_www_and_its_default_port() -> None:
    """Explored at one address, found by runs at the other (a site often redirects one to the other)."""
    assert site_of("https://www.shop.example/books") == site_of("https://shop.example:443/") == "shop.example"
    assert site_of("http://WWW.Shop.Example:80/") == "shop.example"
    assert site_of("http://shop.example:443/") == "shop.example:443"
    assert site_of("http://[::1]:8080/x") == "[::1]:8080"
    assert site_of("http://shop.example:notaport/") == "shop.example"
    # As a user names it: an address, a host or the name given to `explore --site-name`.
    assert site_key("https://www.shop.example/books") == site_key(" www.Shop.Example") == "shop.example"
    assert site_key("sandbox:shopping") == "sandbox:shopping"
