"""Both search strategies on a small fake site: answers given where they were read, budgets kept, destructive actions
kept out of exploring, failed replays not retried, revisited pages not explored twice, lone stops deferred."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from branchwise.actions import Click, GoBack, Goto
from branchwise.core.approval import ScriptedApprover
from branchwise.protocol import NavigationInfo
from branchwise.search.action_aware import ActionAwareConfig, ActionAwareSearch
from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchOutcome
from branchwise.search.step import back_within_trajectory
from branchwise.search.tree import Node
from branchwise.search.value import ValueConfig

from fake_models import Call
from fake_site import (
    ABOUT_URL,
    BOOKS_URL,
    HOME_URL,
    ORCHARD_URL,
    SiteRun,
    act,
    answer_of,
    by_page,
    checklist_judge,
    in_turn,
    page_of,
    search_site,
    verdict,
)


def best_first(**config: object) -> BestFirstSearch:
    return BestFirstSearch(BestFirstConfig.model_validate({"candidates": 5, "value": ValueConfig(n=2)} | config))


def action_aware() -> ActionAwareSearch:
    return ActionAwareSearch(ActionAwareConfig(rephrase=False))


def trajectory(run: SiteRun) -> list[str]:
    by_id = {n.node_id: n for n in run.stored.nodes}
    return [by_id[i].action_text for i in run.stored.trajectory]


def node_of(run: SiteRun, action_text: str) -> int:
    return next(n.node_id for n in run.stored.nodes if n.action_text == action_text)


# The policy walks Home -> Books -> Orchard and answers there.
WALK = {HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")}


def test_best_first_answers_at_a_state_judged_a_success_before_anything_was_answered(tmp_path: Path) -> None:
    """B1: real value models call the page with the answer a success; the answer must then come from the policy."""
    def value(call: Call) -> str:
        return verdict("success") if page_of(call) == ORCHARD_URL else verdict("failure")

    run = search_site(tmp_path, best_first(), by_page(WALK), value)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert trajectory(run) == ["", "click [1]", "click [2]", "stop [1997]"]
    assert run.env.url == ORCHARD_URL
    # Each state was scored once; the answer was not scored again: the policy gave it at a success.
    assert [page_of(c) for c in run.value.calls] == [HOME_URL, BOOKS_URL, ORCHARD_URL]


def test_best_first_does_not_end_on_a_stray_stop_at_a_state_wrongly_judged_a_success(tmp_path: Path) -> None:
    """The value calls the start page a success by mistake; one sample of five answers there. The policy's own choice
    is to go on, so search goes on and finds the answer (found by the simulated model at error rate 0.3)."""
    policy = by_page({HOME_URL: [act("click [1]"), act("click [1]"), act("click [1]"), act("click [1]"),
                                 act("stop [N/A]")],
                      BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")})

    def value(call: Call) -> str:
        if answer_of(call) == "N/A":
            return verdict("failure")  # judged with the answer in view, the stray stop is no success
        return verdict("success") if page_of(call) in (HOME_URL, ORCHARD_URL) else verdict("failure", "yes")

    run = search_site(tmp_path, best_first(), policy, value)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert trajectory(run) == ["", "click [1]", "click [2]", "stop [1997]"]


def test_best_first_keeps_the_budget_exact_and_never_scores_a_state_twice(tmp_path: Path) -> None:
    """B2: with c = 2, the second state scored is not expanded in that round; the next round does not re-score it."""
    def value(call: Call) -> str:
        if answer_of(call) == "1997":
            return verdict("success")
        return verdict("failure", "yes" if page_of(call) != HOME_URL else "no")

    run = search_site(tmp_path, best_first(budget=2), by_page(WALK), value)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    # Books was scored as the budget ran out: sampled once (next round), scored once, never twice.
    assert run.calls_at(run.policy, BOOKS_URL) == 1
    assert run.calls_at(run.value, BOOKS_URL) == 1
    assert run.calls_at(run.value, HOME_URL) == 1
    assert "search round 2 from #1" in run.shown


def test_best_first_step_limit_counts_committed_actions_not_exploring(tmp_path: Path) -> None:
    """Exploring is bounded by the budget, as in the paper: a limit of 1 step does not stop the first round from
    running the two clicks and the answer it explores (it stopped there, failing most dev tasks at the eval's 30)."""
    def value(call: Call) -> str:
        if answer_of(call) == "1997":
            return verdict("success")
        return verdict("failure", "no" if page_of(call) == HOME_URL else "yes")

    run = search_site(tmp_path, best_first(max_steps=1), by_page(WALK), value)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    # The limit is checked before a round: committed to Books after a first round, the second one never starts.
    two_rounds = best_first(max_steps=1, budget=2)
    stopped = search_site(tmp_path / "two", two_rounds, by_page(WALK), value)
    assert stopped.outcome.status == "failed"
    assert stopped.outcome.reason == "reached the step limit (1) without an answer"


def test_best_first_moves_the_browser_to_the_page_the_chosen_answer_was_read_from(tmp_path: Path) -> None:
    """B3: the stop proposed on Books wins after Orchard was explored; the tab must show Books again."""
    policy = by_page({HOME_URL: act("click [1]"),
                      BOOKS_URL: [act("click [2]"), act("click [2]"), act("click [2]"), act("stop [A]"),
                                  act("stop [A]")],
                      ORCHARD_URL: act("click [3]")})

    def value(call: Call) -> str:
        if answer_of(call) == "A":
            return verdict("success")
        return verdict("failure", "no" if page_of(call) == ORCHARD_URL else "yes")

    run = search_site(tmp_path, best_first(), policy, value)
    assert run.outcome == SearchOutcome("finished", answer="A")
    books = node_of(run, "click [1]")
    assert run.backtracker.moves == [books]
    assert run.env.url == BOOKS_URL
    assert trajectory(run) == ["", "click [1]", "stop [A]"]
    end = next(n for n in run.stored.nodes if n.status == "terminal")
    assert end.parent_id == books and end.url == BOOKS_URL


def test_best_first_follows_the_policys_first_choices_when_no_state_is_judged_better(tmp_path: Path) -> None:
    """Every state, the answer included, is judged on track: none better than the start. Rather than end with nothing
    ("search found no state better than where it started", seen with the simulated model), the run does what the
    policy would have done greedily through the states it explored, and gives the answer there."""
    run = search_site(tmp_path, best_first(), by_page(WALK), lambda call: verdict("failure", "yes"))
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "policy proposed first" in run.outcome.reason
    assert run.env.url == ORCHARD_URL
    assert trajectory(run) == ["", "click [1]", "click [2]", "stop [1997]"]


def test_best_first_follows_the_policy_from_a_start_page_wrongly_judged_a_success(tmp_path: Path) -> None:
    """A start page judged a success where the policy does not stop was the best state for good: nothing scores above
    1.0, so every round ended where it began."""
    def value(call: Call) -> str:
        if answer_of(call):
            return verdict("failure", "yes")
        return verdict("success") if page_of(call) == HOME_URL else verdict("failure", "yes")

    run = search_site(tmp_path, best_first(), by_page(WALK), value)
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "policy proposed first" in run.outcome.reason
    assert run.env.url == ORCHARD_URL


def test_best_first_follows_the_policy_through_a_page_judged_worse_than_the_start(tmp_path: Path) -> None:
    """Task 3002 with a 1.5B value model: a page on the way was judged off track, worse than the start, and the right
    answer only as good as the start, below "on track". Nothing was better than the start, so the run does what the
    policy would have done (greedy answered it) instead of giving up with the answer in hand."""
    def value(call: Call) -> str | list[str]:
        if page_of(call) == BOOKS_URL and not answer_of(call):
            return verdict("failure", "no")
        return [verdict("failure", "yes"), verdict("failure", "no")]  # 0.25: the start, Orchard and the answer

    run = search_site(tmp_path, best_first(), by_page(WALK), value)
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "policy proposed first" in run.outcome.reason
    assert run.env.url == ORCHARD_URL
    assert trajectory(run) == ["", "click [1]", "click [2]", "stop [1997]"]


def test_best_first_gives_the_best_answer_found_when_the_policys_own_answer_is_rejected(tmp_path: Path) -> None:
    """The policy's first choice on the start page is an answer every value verdict rejected: it is not given. An
    answer judged on track was found on Books: that one is, with the reason saying it is below the threshold."""
    policy = by_page({HOME_URL: [act("stop [guess]")] * 3 + [act("click [1]")] * 2, BOOKS_URL: act("stop [1997]")})

    def value(call: Call) -> str:
        return verdict("failure", "no" if answer_of(call) == "guess" else "yes")

    run = search_site(tmp_path, best_first(), policy, value)
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "answering with the best answer found" in run.outcome.reason
    assert run.env.url == BOOKS_URL


def test_best_first_gives_the_policys_answer_valued_below_the_start_unless_every_verdict_rejected_it(
        tmp_path: Path) -> None:
    """Task 3002 again, another run: every policy sample answered, and the answer was valued one verdict below the
    start (0.1 against 0.2). A small model's values move by one verdict from state to state: that is not a
    rejection."""
    def value(call: Call) -> str | list[str]:
        if answer_of(call):
            return [verdict("failure", "yes"), verdict("failure", "no")]  # 0.25
        return verdict("failure", "yes")  # 0.5: every page, the start included

    run = search_site(tmp_path, best_first(), by_page(WALK), value)
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "policy proposed first" in run.outcome.reason


def test_best_first_does_not_commit_to_a_page_judged_off_track_where_the_policys_way_ends(tmp_path: Path) -> None:
    """The policy's way leads through pages judged off track to a link back home (a page seen already): it ends on a
    page, not an answer, so the browser is not committed there; the answer judged on track on About is given."""
    policy = by_page({HOME_URL: [act("click [1]")] * 3 + [act("click [2]")] * 2, BOOKS_URL: act("click [2]"),
                      ORCHARD_URL: act("click [1]"), ABOUT_URL: act("stop [Spring]")})

    def value(call: Call) -> str:
        return verdict("failure", "no" if page_of(call) in (BOOKS_URL, ORCHARD_URL) else "yes")

    run = search_site(tmp_path, best_first(), policy, value)
    assert (run.outcome.status, run.outcome.answer) == ("finished", "Spring")
    assert "answering with the best answer found" in run.outcome.reason
    assert run.env.url == ABOUT_URL


def test_best_first_gives_the_policys_answer_when_every_state_was_rejected_alike(tmp_path: Path) -> None:
    """Task 3003 with a 1.5B value model: every verdict on every state, the start, the pages on the way and the right
    answer, said failure and off track. A rejection of everything says nothing about the answer: the run does what the
    policy would have done greedily, and says why."""
    run = search_site(tmp_path, best_first(), by_page(WALK), lambda call: verdict("failure", "no"))
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "every state was valued 0.00: the value function told none apart" in run.outcome.reason
    assert run.env.url == ORCHARD_URL


def test_best_first_walks_the_policys_way_through_pages_rejected_alike_when_the_budget_ends_before_an_answer(
        tmp_path: Path) -> None:
    """The same blanket rejection with a budget that runs out before the answer is reached: the browser is committed
    along the policy's first choices (rather than the run ending where it started), and the next round finds the
    answer from there."""
    run = search_site(tmp_path, best_first(budget=2), by_page(WALK), lambda call: verdict("failure", "no"))
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "following the policy's first choices to" in run.shown
    assert trajectory(run) == ["", "click [1]", "click [2]", "stop [1997]"]


def test_best_first_asks_the_policy_again_where_everything_it_proposed_led_back_to_the_same_page(
        tmp_path: Path) -> None:
    """Task 2003 with the 1.5B model: every proposal on the start page clicked text that goes nowhere, each led back to
    the same page, and the run gave up with most of its budget left. The policy is asked again there, told what it
    tried; its new proposal is searched."""
    def policy(call: Call) -> str | Sequence[str]:
        if page_of(call) == HOME_URL:
            return act("click [1]") if "click [5] (tried here already)" in call.last else act("click [5]")
        return by_page(WALK)(call)

    run = search_site(tmp_path, best_first(), policy, lambda call: verdict("failure", "yes"))
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "nothing left to try at #0: asking the policy there again, told it tried click [5]" in run.shown
    assert run.calls_at(run.policy, HOME_URL) == 2
    assert run.env.executed.count((HOME_URL, "click [5]")) == 1, "what led nowhere is not run again"


def test_best_first_gives_up_when_asking_again_brings_nothing_new(tmp_path: Path) -> None:
    """The policy insists on what it tried: asked once more, then the run ends, with its reason."""
    run = search_site(tmp_path, best_first(), by_page({HOME_URL: act("click [5]")}),
                      lambda call: verdict("failure", "yes"))
    assert run.outcome.status == "failed"
    assert run.outcome.reason == "search found no state better than where it started"
    assert run.calls_at(run.policy, HOME_URL) == 2


def test_best_first_gives_no_answer_most_value_samples_call_off_track(tmp_path: Path) -> None:
    """One sample of two on track (0.25) is not "at least on track": an answer that is not where the policy's own
    first choices lead (there, a link back to Books) is not given; the run fails rather than give it."""
    policy = by_page({HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"),
                      ORCHARD_URL: [act("click [3]")] * 3 + [act("stop [1997]")] * 2})

    def value(call: Call) -> str | list[str]:
        if answer_of(call):
            return [verdict("failure", "yes"), verdict("failure", "no")]
        return verdict("failure", "no" if page_of(call) == BOOKS_URL else "yes")

    run = search_site(tmp_path, best_first(), policy, value)
    assert run.outcome.status == "failed"


def test_best_first_gives_no_answer_the_value_function_rejected(tmp_path: Path) -> None:
    def value(call: Call) -> str:
        return verdict("failure", "no" if answer_of(call) else "yes")

    run = search_site(tmp_path, best_first(), by_page(WALK), value)
    assert run.outcome.status == "failed"
    assert run.outcome.reason == "search found no state better than where it started"


def test_best_first_never_runs_a_destructive_proposal_while_exploring(tmp_path: Path) -> None:
    policy = by_page({HOME_URL: act("click [1]"),
                      BOOKS_URL: [act("click [3]"), act("click [3]"), act("click [3]"), act("click [2]")],
                      ORCHARD_URL: act("stop [1997]")})

    def value(call: Call) -> str:
        return verdict("success") if answer_of(call) == "1997" else verdict("failure")

    approver = ScriptedApprover([True])
    run = search_site(tmp_path, best_first(), policy, value, approver=approver)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    # "Buy all" was the most sampled move on Books, but a safe move reached the answer: nobody was asked.
    assert approver.requests == []
    assert (BOOKS_URL, "click [3]") not in run.env.executed


def test_best_first_runs_a_destructive_first_choice_once_nothing_safe_does_better(tmp_path: Path) -> None:
    """Buying is what the policy wants on Books; the safe alternative is judged off track. Search follows the policy
    to Books, then asks the user and runs the purchase: never while exploring, never a move few samples proposed."""
    policy = by_page({HOME_URL: [act("click [1]"), act("click [1]"), act("click [4]")],
                      BOOKS_URL: [act("click [3]"), act("click [3]"), act("click [3]"), act("click [2]")],
                      ORCHARD_URL: act("stop [1997]")})

    def value(call: Call) -> str:
        return verdict("failure", "no" if page_of(call) == ORCHARD_URL or answer_of(call) else "yes")

    approver = ScriptedApprover([True])
    run = search_site(tmp_path, best_first(), policy, value, approver=approver)
    # (The fake purchase leaves Books as it was, so the policy wants to buy again: asked again, refused.)
    assert [(r.url, r.action_text) for r in approver.requests] == [(BOOKS_URL, "click [3]")] * 2
    assert run.env.executed.count((BOOKS_URL, "click [3]")) == 1
    # Subscribe on Home, destructive too, was proposed by one sample in three: never run.
    assert (HOME_URL, "click [4]") not in run.env.executed


def test_a_failed_replay_marks_its_node_so_no_other_action_there_retries_it(tmp_path: Path) -> None:
    policy = by_page({HOME_URL: [act("click [1]"), act("click [1]"), act("click [2]"), act("click [3]")],
                      BOOKS_URL: act("click [2]"), ORCHARD_URL: act("click [3]")})
    run = search_site(tmp_path, best_first(), policy, fail={0})
    # About and Contact both wait on the start page; after one replay there failed, the other is not tried.
    assert run.backtracker.moves.count(0) == 1
    assert not any(url == HOME_URL and action in ("click [2]", "click [3]") for url, action in run.env.executed)
    assert "cannot go back to #0: the page changed" in run.shown


def test_action_aware_defers_a_lone_stop_and_gives_it_from_its_own_page(tmp_path: Path) -> None:
    """B6 + B3: one generator of three answers on Books; the others go on to Orchard, whose only move leads back to
    the start page (recognised, not explored again). The deferred answer is then the one left, and it is given from
    Books, with the browser moved back there."""
    policy = in_turn({HOME_URL: [act("click [1]")],
                      BOOKS_URL: [act("stop [1997]"), act("click [2]")],
                      ORCHARD_URL: [act("click [1]")]})
    run = search_site(tmp_path, action_aware(), policy)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    books = node_of(run, "click [1]")
    assert run.env.url == BOOKS_URL and run.backtracker.moves == [books]
    assert trajectory(run) == ["", "click [1]", "stop [1997]"]
    # Orchard -> Home was recognised as the start page: the start page was expanded once.
    assert run.calls_at(run.policy, HOME_URL) == 3
    assert "led back to the page of #0; not explored again" in run.shown
    back = next(n for n in run.stored.nodes if n.url == HOME_URL and n.parent_id is not None)
    assert (back.status, back.note) == ("dead", "led back to the page of #0"), "show says why it was not explored"
    assert "deferred until 2 agree" in run.shown
    # All three generators proposed the click: its reward is their sum, and the line says so.
    assert "#0: 1 candidate(s): click [1] [" in run.shown and " (3 generators)\n" in run.shown


def test_action_aware_gives_the_best_rewarded_answer_not_the_most_frequent(tmp_path: Path) -> None:
    """B6: two generators say 2003, one says 1997, and the reward model rates only 1997 as reading the year."""
    def reward(call: Call) -> str:
        if "Starting URL:" in call.last:
            return checklist_judge(call)
        return "Checklist 1: Yes" if "stop [1997]" in call.last else "Checklist 1: No"

    policy = in_turn({HOME_URL: [act("stop [2003]"), act("stop [1997]"), act("stop [2003]")]})
    run = search_site(tmp_path, action_aware(), policy, reward=reward)
    assert run.outcome == SearchOutcome("finished", answer="1997")


def test_action_aware_asks_before_spending_a_replay_on_a_destructive_action(tmp_path: Path) -> None:
    """Subscribe waits on the start page while search is on Books, a dead end; denied, it needs no replay."""
    policy = in_turn({HOME_URL: [act("click [1]"), act("click [1]"), act("click [4]")],
                      BOOKS_URL: [act("click [99]")]})
    approver = ScriptedApprover([False])
    run = search_site(tmp_path, action_aware(), policy, approver=approver)
    assert [r.action_text for r in approver.requests] == ["click [4]"]
    assert run.backtracker.moves == []
    assert run.outcome.status == "failed" and "not allowed to run `click [4]`" in run.outcome.reason


def test_go_back_in_a_restored_tab_goes_to_the_page_the_trajectory_came_from() -> None:
    """A backtrack restores a page in a new tab whose only page behind is about:blank (seen in best_first traces:
    `go_back -> about:blank`); the move must go where the trajectory came from."""
    def node(url: str) -> Node:
        return Node(id=0, parent_id=None, depth=0, url=url)

    lineage = [node(HOME_URL), node(BOOKS_URL), node(BOOKS_URL)]  # typed into a field on Books: same page
    restored = NavigationInfo(can_go_back=False)
    assert back_within_trajectory(GoBack(), lineage, restored) == Goto(HOME_URL)
    # A tab with its own history, or one that cannot say, goes back as the browser does.
    assert back_within_trajectory(GoBack(), lineage, NavigationInfo(can_go_back=True)) == GoBack()
    assert back_within_trajectory(GoBack(), lineage, NavigationInfo()) == GoBack()
    # Nothing before the first page: left to the browser (validation refuses it there).
    assert back_within_trajectory(GoBack(), lineage[:1], restored) == GoBack()
    assert back_within_trajectory(Click(3), lineage, restored) == Click(3)


def test_go_back_in_a_restored_tab_runs_and_is_recorded_as_a_goto_to_the_page_before(tmp_path: Path) -> None:
    """Books is restored in a new tab after Orchard was explored; the policy's way on from Books is back to Home. The
    tab has nothing behind it, so the step is a `goto` Home (a revisit of the start page), recorded as such."""
    policy = by_page({HOME_URL: act("click [1]"), BOOKS_URL: [act("click [2]"), act("click [2]"), act("go_back")],
                      ORCHARD_URL: act("click [3]")})

    def value(call: Call) -> str:
        return verdict("failure", "no" if page_of(call) == ORCHARD_URL else "yes")

    run = search_site(tmp_path, best_first(budget=4), policy, value, history=True)
    assert (BOOKS_URL, f"goto [{HOME_URL}]") in run.env.executed
    assert (BOOKS_URL, "go_back") not in run.env.executed
    assert any(n.action_text == f"goto [{HOME_URL}]" for n in run.stored.nodes)
    assert "the page before" in run.shown


def test_best_first_still_answers_when_the_state_it_moves_on_to_cannot_be_reached(tmp_path: Path) -> None:
    """The policy's path leads to Orchard (#2), but the replay there fails: the answer found on About is given rather
    than failing the run on the move."""
    policy = by_page({HOME_URL: [act("click [1]")] * 3 + [act("click [2]")] * 2, BOOKS_URL: act("click [2]"),
                      ORCHARD_URL: act("click [3]"), ABOUT_URL: act("stop [1997]")})
    run = search_site(tmp_path, best_first(), policy, lambda call: verdict("failure", "yes"), fail={2})
    assert (run.outcome.status, run.outcome.answer) == ("finished", "1997")
    assert "could not return to the best state #2" in run.outcome.reason


def test_a_prompts_history_names_the_element_a_step_acted_on_and_not_its_id(tmp_path: Path) -> None:
    """Books numbers its own elements from 1 again: the step that led there is told in words, so the model has no
    stale id to reuse (Qwen2.5-Coder-1.5B answered with an earlier step's id on most such pages,
    `make bench-history-ids`)."""
    def value(call: Call) -> str:
        return verdict("success") if page_of(call) == BOOKS_URL else verdict("failure")

    policy = by_page({HOME_URL: act("click [1]"), BOOKS_URL: act("stop [1997]")})
    for strategy in (action_aware(), best_first()):
        run = search_site(tmp_path / type(strategy).__name__, strategy, policy, value)
        asked = [c.last for c in run.policy.calls if page_of(c) == BOOKS_URL]
        assert asked and all("PREVIOUS ACTION: \n1. clicked link 'Books' (seen: " in text for text in asked), asked
        assert run.outcome.answer == "1997"
