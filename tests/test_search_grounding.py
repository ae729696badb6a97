"""An answer gives only numbers a page on the way showed: a made-up price or count is refused once, with the reason,
and taken if the model gives it again (it may have counted it); the task's own numbers and every page on the path
count as seen, in every strategy that answers with `stop`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from branchwise.actions import Stop
from branchwise.search.action_aware import ActionAwareConfig, ActionAwareSearch
from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchOutcome
from branchwise.search.greedy import GreedyConfig, GreedySearch
from branchwise.search.grounding import numbers_in, unseen_numbers
from branchwise.search.validate import ActionSpace, validate_action
from branchwise.search.value import ValueConfig

from fake_models import Call
from fake_site import BOOKS_URL, HOME_URL, ORCHARD_URL, act, in_turn, page_of, search_site, verdict

# A product page as the model is shown it.
PRODUCT = """Tab 0 (current): Hearthwell Kettle · Shop
URL: http://127.0.0.1:37519/product/96

[763] RootWebArea 'Hearthwell Premium Electric Kettle'
\t[801] StaticText '$66.95'
\t[802] StaticText '1,345 reviews by silver_maple73'
\t[803] StaticText 'Was $80.00'
"""


def test_the_numbers_a_page_shows_are_whole_words_without_the_element_ids() -> None:
    seen = numbers_in(PRODUCT)
    assert {"66.95", "1345", "80", "96"} <= seen
    # [763] and [801] are element ids; "silver_maple73" is a name.
    assert not {"763", "801", "73"} & seen


def test_an_answer_s_numbers_are_compared_as_numbers() -> None:
    seen = numbers_in(PRODUCT)
    assert unseen_numbers("$66.95", seen) == [] and unseen_numbers("1345", seen) == []
    assert unseen_numbers("$80", seen) == [] and unseen_numbers("80.00 dollars", seen) == []
    assert unseen_numbers("$499.95, or 499.95 with 23 reviews", seen) == ["499.95", "23"]
    assert unseen_numbers("N/A", seen) == [] and unseen_numbers("silver_maple73", seen) == []
    assert unseen_numbers("order 0096, 0 left", seen | {"0"}) == []


def test_the_browser_s_tab_line_and_host_are_not_the_page_s_numbers_but_ids_in_names_are() -> None:
    seen = numbers_in(PRODUCT + "\t[804] link 'Reviews [12]'\n\t[805] StaticText 'Total $1,000.50'\n")
    assert not {"0", "37519", "127.0.0.1"} & seen  # "Tab 0", the URL's host and port
    assert {"96", "12", "1000.5"} <= seen  # the URL's path; "[12]" in a link's name; 1,000.50
    assert unseen_numbers("$1000.50", seen) == []


def test_a_stop_with_a_number_no_page_showed_is_refused_until_given_again() -> None:
    space = ActionSpace(seen_numbers=numbers_in(PRODUCT))
    assert validate_action(Stop("$66.95"), None, space) is None
    refusal = validate_action(Stop("$499.95"), None, space)
    assert refusal is not None and "no page on the way here shows 499.95" in refusal.reason
    assert "N/A" in refusal.reason and "give the same answer again" in refusal.reason
    assert validate_action(Stop("$499.95"), None, space.with_seen("$499.95")) is None
    # A state whose pages are unknown (a default space) refuses nothing.
    assert validate_action(Stop("$499.95"), None, ActionSpace()) is None


def test_greedy_is_told_its_made_up_number_and_answers_from_the_page(tmp_path: Path) -> None:
    policy = in_turn({HOME_URL: [act("click [1]")], BOOKS_URL: [act("click [2]")],
                      ORCHARD_URL: [act("stop [1999]"), act("stop [1997]")]})
    run = search_site(tmp_path, GreedySearch(GreedyConfig()), policy)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    retry = run.policy.calls[-1].last
    assert "stop [1999]" in retry and "no page on the way here shows 1999" in retry
    assert run.roles.mistakes() == {"policy": {"ungrounded_answer": 1}}


def test_greedy_takes_a_number_given_again_and_one_read_earlier_on_the_path(tmp_path: Path) -> None:
    counted = in_turn({HOME_URL: [act("click [1]")], BOOKS_URL: [act("click [2]")],
                       ORCHARD_URL: [act("stop [3]")]})
    assert search_site(tmp_path / "a", GreedySearch(GreedyConfig()), counted).outcome.answer == "3"
    # 2003 is on the home page only, two pages back.
    earlier = in_turn({HOME_URL: [act("click [1]")], BOOKS_URL: [act("click [2]")],
                       ORCHARD_URL: [act("stop [2003]")]})
    run = search_site(tmp_path / "b", GreedySearch(GreedyConfig()), earlier)
    assert run.outcome.answer == "2003" and run.roles.mistakes() == {}


def test_greedy_takes_a_refused_number_again_only_where_it_was_refused(tmp_path: Path) -> None:
    policy = in_turn({HOME_URL: [act("stop [4242]"), act("click [1]")], BOOKS_URL: [act("stop [4242]"),
                                                                                   act("stop [1997]")]})
    run = search_site(tmp_path, GreedySearch(GreedyConfig()), policy)
    assert run.outcome.answer == "1997" and run.roles.mistakes() == {"policy": {"ungrounded_answer": 2}}


def test_best_first_drops_a_lone_made_up_answer_and_keeps_one_sampled_twice(tmp_path: Path) -> None:
    """The real run's best_first proposed "N/A" and "$499.95" for a product the shop does not sell; its value model
    scored the made-up price higher."""
    def value(call: Call) -> str:
        return verdict("success") if "stop [4242]" in call.last or "4242" in call.last else verdict("failure")

    def sampled(home: list[str]) -> Callable[[Call], str | list[str]]:
        walk = {BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")}
        return lambda call: [act(a) for a in home] if page_of(call) == HOME_URL else walk[page_of(call)]

    search = BestFirstSearch(BestFirstConfig(candidates=3, branching=3, value=ValueConfig(n=1)))
    run = search_site(tmp_path / "a", search, sampled(["stop [4242]", "stop [N/A]", "click [1]"]), value)
    assert run.outcome.answer != "4242"
    assert not any(n.answer == "4242" for n in run.stored.nodes)
    assert run.roles.mistakes()["policy"] == {"ungrounded_answer": 1}

    twice = search_site(tmp_path / "b", search, sampled(["stop [4242]", "stop [4242]", "click [1]"]), value)
    assert twice.outcome.answer == "4242"
    # A refused sample allows its number at its node only: once below it, it is refused again.
    below = search_site(tmp_path / "c", search, sampled(["stop [4242]", "click [1]", "click [1]"]), value)
    assert below.outcome.answer != "4242"


def test_an_action_aware_generator_is_told_and_answers_again(tmp_path: Path) -> None:
    policy = in_turn({HOME_URL: [act("click [1]")], BOOKS_URL: [act("click [2]")],
                      ORCHARD_URL: [act("stop [1999]"), act("stop [1997]")]})
    run = search_site(tmp_path, ActionAwareSearch(ActionAwareConfig(rephrase=False)), policy)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    told = [c for c in run.policy.calls if page_of(c) == ORCHARD_URL and "no page on the way here shows 1999" in c.last]
    assert len(told) == 1
    assert not any(n.answer == "1999" for n in run.stored.nodes)
