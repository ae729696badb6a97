"""`--examples`: every strategy's policy prompt carries the steps retrieved from the site's demonstrations (and
finished runs), ranked against the task and the page; without the flag, none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchStrategy
from branchwise.search.greedy import GreedySearch
from branchwise.search.mcts import MctsConfig, MctsSearch
from branchwise.search.value import ValueConfig
from branchwise.store import DemonstrationRecord, DemoStep, NodeRecord, RunRecord, RunStore

from fake_models import Call
from fake_site import BOOKS_URL, HOME_URL, ORCHARD_URL, PAGES, TASK, SiteRun, act, page_of, search_site, verdict
from test_mcts import Pilot, agent

DEMO = "Find when The Quiet Orchard was published"
OTHER_SITE = "Find the opening hours of the shop"


def demos(store: RunStore) -> None:
    steps = [DemoStep(url=HOME_URL, observation_text=PAGES[HOME_URL].text, thought="Books are listed under Books.",
                      action_text="click [1]"),
             DemoStep(url=BOOKS_URL, observation_text=PAGES[BOOKS_URL].text, thought="The book is listed.",
                      action_text="click [2]"),
             DemoStep(url=ORCHARD_URL, action_text="stop [1997]")]
    store.add_demonstration(DemonstrationRecord(site="books.example", instruction=DEMO, steps=steps, score=5))
    store.add_demonstration(DemonstrationRecord(site="elsewhere.example", instruction=OTHER_SITE, steps=steps,
                                                score=5))


def strategies() -> dict[str, SearchStrategy]:
    return {"greedy": GreedySearch(),
            "best_first": BestFirstSearch(BestFirstConfig(candidates=1, branching=1, value=ValueConfig(n=1))),
            "mcts": MctsSearch(MctsConfig(simulate=False))}


def walk_the_site(tmp_path: Path, name: str, **options: Any) -> SiteRun:
    """Strategy `name` finds when The Quiet Orchard was published (Home, Books, the book; mcts by its pilot);
    `options`: search_site's."""
    pilot = Pilot()
    walk = {HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")}

    def policy(call: Call) -> str:
        return walk[page_of(call)] if name != "mcts" else pilot.policy(call)

    def value(call: Call) -> str:
        return pilot.value(call) if name == "mcts" else verdict("success" if "1997" in call.last else "failure")

    return search_site(tmp_path, strategies()[name], policy, value, **options)


@pytest.mark.parametrize("name", ["greedy", "best_first", "mcts"])
@pytest.mark.parametrize("examples", [True, False])
def test_every_strategys_policy_prompt_shows_the_sites_demonstrations_with_examples(
        tmp_path: Path, name: str, examples: bool) -> None:
    run = walk_the_site(tmp_path, name, examples=examples, before=demos)
    assert run.outcome.answer == "1997"
    prompts = [c for c in run.policy.calls if agent(c) == "explorer"]
    assert prompts
    shown = [c.last for c in prompts]
    if examples:
        assert all(f"Task: {DEMO}" in text for text in shown)
        assert all(OTHER_SITE not in text for text in shown)
        assert "retrieval: 3 past steps from 0 finished run(s) and 1 demonstration(s) of books.example" in run.shown
    else:
        assert not any("Steps that worked on similar tasks" in text for text in shown)


def earlier_run_and_demos(store: RunStore) -> None:
    """The site's demonstration, and another strategy's finished run of the same task that answered wrongly."""
    demos(store)
    store.start_run(RunRecord(run_id="earlier", task=TASK, strategy="best_first"))
    for node_id, (url, action) in enumerate([(HOME_URL, ""), (BOOKS_URL, "stop [2003]")]):
        store.upsert_node(NodeRecord(run_id="earlier", node_id=node_id, parent_id=node_id - 1 if node_id else None,
                                     url=url, observation_text=PAGES[HOME_URL].text, action_text=action,
                                     thought="The year is on the list."))
    store.set_trajectory("earlier", [0, 1])
    store.finish_run("earlier", "finished", answer="2003")


@pytest.mark.parametrize("past_runs", [True, False])
def test_without_past_runs_only_the_demonstrations_are_retrieved(tmp_path: Path, past_runs: bool) -> None:
    """What eval runs with: another run's answer to the same task never reaches the prompt."""
    walk = {HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")}
    run = search_site(tmp_path, GreedySearch(), lambda call: walk[page_of(call)], examples=True,
                      past_runs=past_runs, before=earlier_run_and_demos)
    assert run.outcome.answer == "1997"
    shown = [c.last for c in run.policy.calls]
    assert all(f"Task: {DEMO}" in text for text in shown)
    assert any("stop [2003]" in text for text in shown) == past_runs
    runs = 1 if past_runs else 0
    assert f"from {runs} finished run(s) and 1 demonstration(s) of books.example" in run.shown


@pytest.mark.parametrize("name", ["greedy", "best_first", "mcts"])
def test_every_strategys_policy_prompt_says_what_the_page_does_not_allow(tmp_path: Path, name: str) -> None:
    """The fake site's tab is the only one, and its pages have no list of options."""
    run = walk_the_site(tmp_path, name)
    prompts = [c.last for c in run.policy.calls if agent(c) == "explorer"]
    assert prompts and all("NOT POSSIBLE HERE: " in text and "tab_focus and close_tab (only one tab is open)" in text
                           and "select_option (no list of options on this page)" in text for text in prompts)
