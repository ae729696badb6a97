"""`--examples`: every strategy's policy prompt carries the steps retrieved from the site's demonstrations (and
finished runs), ranked against the task and the page; without the flag, none."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchStrategy
from branchwise.search.greedy import GreedySearch
from branchwise.search.mcts import MctsConfig, MctsSearch
from branchwise.search.value import ValueConfig
from branchwise.store import DemonstrationRecord, DemoStep, RunStore

from fake_models import Call
from fake_site import BOOKS_URL, HOME_URL, ORCHARD_URL, PAGES, act, page_of, search_site, verdict
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


@pytest.mark.parametrize("name", ["greedy", "best_first", "mcts"])
@pytest.mark.parametrize("examples", [True, False])
def test_every_strategys_policy_prompt_shows_the_sites_demonstrations_with_examples(
        tmp_path: Path, name: str, examples: bool) -> None:
    pilot = Pilot()
    walk = {HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")}

    def policy(call: Call) -> str:
        return walk[page_of(call)] if name != "mcts" else pilot.policy(call)

    def value(call: Call) -> str:
        return pilot.value(call) if name == "mcts" else verdict("success" if "1997" in call.last else "failure")

    run = search_site(tmp_path, strategies()[name], policy, value, examples=examples, before=demos)
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
