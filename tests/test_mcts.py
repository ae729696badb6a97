"""WebPilot's strategy (search/mcts.py) on the small fake site: the plan, the subtask loop, where each reflection lands,
retries and refined plans, the one-step simulation, destructive actions asked about, and small models' mistakes.

Home ([1] Books, [2] About, [3] Contact, [4] button Subscribe) -> Books ([1] Home, [2] Orchard, [3] button Buy all) ->
Orchard ([2] 'Published 1997'). The policy model's client answers the Planner, Explorer, Controller and Extractor
(their prompts say which); the value model's, the Appraiser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from branchwise.core.approval import ScriptedApprover
from branchwise.search.context import SearchOutcome
from branchwise.search.mcts import MctsConfig, MctsSearch

from fake_models import Call
from fake_site import ABOUT_URL, BOOKS_URL, CONTACT_URL, HOME_URL, ORCHARD_URL, SiteRun, act, page_of, search_site

Answer = Callable[[Call], str]


def agent(call: Call) -> str:
    """Which of WebPilot's agents a prompt is for (the first line of its part after the page), or `explorer`."""
    found = re.search(r"^You are the (\w+) of a web agent(, looking back)?", call.last, re.M)
    if found and found.group(2):
        return "reflect"
    return found.group(1).lower() if found else "explorer"


def objective(call: Call) -> str:
    return call.last.split("OBJECTIVE:", 1)[1].split("PREVIOUS ACTION:", 1)[0] if "OBJECTIVE:" in call.last else ""


def url_after(call: Call) -> str:
    found = re.search(r"^Current URL: (\S+)", call.last, re.M)
    return found.group(1) if found else ""


@dataclass
class Pilot:
    """The answers of each agent; the defaults walk Home -> Books -> Orchard and read the year there."""

    plans: list[str] = field(default_factory=lambda: ["Subtask 1: Open the book's page\nSubtask 2: Extract: the year"])
    explorer: Answer = lambda call: {HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"),
                                     ORCHARD_URL: act("stop [done]")}.get(page_of(call), act("go_back"))
    complete_at: frozenset[str] = frozenset({ORCHARD_URL})
    scores: Mapping[str, tuple[int, int]] = field(default_factory=lambda: {BOOKS_URL: (8, 7), ORCHARD_URL: (9, 10)})
    reflection: str = "Effect: a page opened\nChild reflection: go on from here\nSibling reflection: try another link"
    calls: dict[str, list[Call]] = field(default_factory=dict)

    def policy(self, call: Call) -> str:
        role = agent(call)
        self.calls.setdefault(role, []).append(call)
        if role == "planner":
            return self.plans.pop(0) if len(self.plans) > 1 else self.plans[0]
        if role == "explorer":
            return self.explorer(call)
        if role == "controller":
            done = url_after(call) in self.complete_at
            return f"Complete: {'yes' if done else 'no'}\nReflection: {'' if done else 'this is not the book page'}"
        if role == "extractor":
            return "Answer: 1997" if url_after(call) == ORCHARD_URL else "Answer: N/A"
        return self.reflection

    def value(self, call: Call) -> str:
        self.calls.setdefault("appraiser", []).append(call)
        effectiveness, future = self.scores.get(url_after(call), (1, 1))
        return f"Effectiveness: {effectiveness}\nFuture promise: {future}"


def run_pilot(tmp_path: Path, pilot: Pilot, approver: ScriptedApprover | None = None, **config: object) -> SiteRun:
    settings = MctsConfig.model_validate({"simulate": False} | config)
    return search_site(tmp_path, MctsSearch(settings), pilot.policy, pilot.value, approver=approver)


def test_the_plan_is_searched_subtask_by_subtask_and_the_extractor_answers(tmp_path: Path) -> None:
    pilot = Pilot()
    run = run_pilot(tmp_path, pilot)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    assert len(pilot.calls["planner"]) == 1 and len(pilot.calls["extractor"]) == 1
    # The Explorer works on the subtask, the user's task first.
    assert "Current subtask: Open the book's page" in objective(pilot.calls["explorer"][0])
    assert objective(pilot.calls["explorer"][0]).strip().startswith("When was The Quiet Orchard published?")
    # Every node was appraised, and the answer is the last step, given where it was read.
    assert [url_after(c) for c in pilot.calls["appraiser"]] == [BOOKS_URL, ORCHARD_URL]
    nodes = {n.node_id: n for n in run.stored.nodes}
    assert nodes[run.stored.trajectory[-1]].action_text == "stop [1997]"
    assert run.stored.usage and {u.role for u in run.stored.usage} >= {"planner", "policy", "value"}


def test_the_judges_are_told_each_step_by_the_element_it_acted_on_not_by_an_id_of_the_page_before(
        tmp_path: Path) -> None:
    """`click [2]` on Books is Orchard's link there; on the Orchard page the judges see, [2] is a text."""
    pilot = Pilot()
    run_pilot(tmp_path, pilot)
    at_orchard = {role: next(c for c in pilot.calls[role] if url_after(c) == ORCHARD_URL)
                  for role in ("reflect", "appraiser", "controller", "extractor")}
    for role in ("reflect", "appraiser", "extractor"):
        assert "Action taken: clicked link 'Orchard'\n" in at_orchard[role].last, role
    assert "1. clicked link 'Books'\n2. clicked link 'Orchard'\n" in at_orchard["controller"].last
    assert all("click [" not in c.last.split("Subtask:", 1)[1] for c in at_orchard.values())


def test_a_low_scored_child_is_left_for_a_sibling_that_is_told_what_was_tried(tmp_path: Path) -> None:
    """About scores 1/1: selection widens at Home instead of exploring About further; the Explorer's second prompt at
    Home carries About's sibling reflection and the list of actions tried there."""
    tries = iter([act("click [2]"), act("click [1]")])

    def explorer(call: Call) -> str:
        return next(tries) if page_of(call) == HOME_URL else {BOOKS_URL: act("click [2]")}.get(page_of(call),
                                                                                               act("stop [x]"))

    pilot = Pilot(explorer=explorer, reflection="Effect: opened\nChild reflection: c-advice\nSibling reflection: "
                                                "About holds no books")
    run = run_pilot(tmp_path, pilot)
    assert run.outcome.answer == "1997"
    second_at_home = [c for c in pilot.calls["explorer"] if page_of(c) == HOME_URL][1]
    assert "Reflection: About holds no books" in objective(second_at_home)
    assert "Already tried from this page (choose a different action): click [2]" in objective(second_at_home)
    # The child reflection is for the next step from the node it was written about: it reaches the Books prompt.
    at_books = next(c for c in pilot.calls["explorer"] if page_of(c) == BOOKS_URL)
    assert "Reflection: c-advice" in objective(at_books)
    assert "Already tried" not in objective(at_books)
    # Going back to Home was a replay (the tab was at About).
    assert run.backtracker.moves and run.stored.nodes[0].node_id in run.backtracker.moves


def test_a_failed_subtask_is_retried_with_the_controllers_reflection_then_the_plan_is_refined(tmp_path: Path) -> None:
    """The first plan sends the agent to Contact; the Controller calls it incomplete twice; the Planner is told why
    and plans Books instead, which answers."""
    def explorer(call: Call) -> str:
        wanted = "Books" if "Open Books" in objective(call) else "Contact"
        return {HOME_URL: act("click [1]" if wanted == "Books" else "click [3]"), BOOKS_URL: act("click [2]"),
                CONTACT_URL: act("click [1]" if wanted == "Books" else "stop [here]")}[page_of(call)]

    pilot = Pilot(plans=["Subtask 1: Open Contact and ask\nSubtask 2: Extract: the year",
                         "Subtask 1: Open Books then the book\nSubtask 2: Extract: the year"],
                  explorer=explorer, scores={CONTACT_URL: (5, 5), BOOKS_URL: (8, 7), ORCHARD_URL: (9, 10)})
    run = run_pilot(tmp_path, pilot, max_nodes=3)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    at_home = [c for c in pilot.calls["explorer"] if "Open Contact" in objective(c) and page_of(c) == HOME_URL]
    # The second attempt starts from Home again and carries the Controller's strategic reflection.
    assert len(at_home) >= 2
    assert "Reflection: this is not the book page" not in objective(at_home[0])
    assert "Reflection: this is not the book page" in objective(at_home[-1])
    refined = pilot.calls["planner"][1].last
    assert "Subtask that failed: Open Contact and ask" in refined and "this is not the book page" in refined
    assert (BOOKS_URL, "click [2]") in run.env.executed


def test_a_controller_reply_without_its_verdict_is_not_complete_and_its_reflection_leads_the_retry(
        tmp_path: Path) -> None:
    """A real 1.5B Controller wrote the reflection alone, a quarter of the time: the subtask is tried again, told it."""
    class Verdictless(Pilot):
        def policy(self, call: Call) -> str:
            if agent(call) == "controller" and url_after(call) == CONTACT_URL:
                self.calls.setdefault("controller", []).append(call)
                return "Reflection: Contact is not the book page; open Books"
            return super().policy(call)

    def explorer(call: Call) -> str:
        told = "Reflection: Contact is not the book page; open Books" in objective(call)
        return {HOME_URL: act("click [1]" if told else "click [3]"), BOOKS_URL: act("click [2]"),
                CONTACT_URL: act("stop [here]")}.get(page_of(call), act("stop [x]"))

    pilot = Verdictless(explorer=explorer)
    run = run_pilot(tmp_path, pilot, max_nodes=1)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert [url_after(c) for c in pilot.calls["controller"]][:1] == [CONTACT_URL]
    assert (BOOKS_URL, "click [2]") in run.env.executed
    assert run.roles.mistakes() == {"planner": {"unreadable_verdict": 1}}


def test_the_one_step_simulation_runs_the_next_action_and_keeps_it_as_a_child(tmp_path: Path) -> None:
    pilot = Pilot(complete_at=frozenset())
    run = run_pilot(tmp_path, pilot, simulate=True, max_nodes=2, max_attempts=1, max_replans=0)
    # Expanding Home reached Books; the look-ahead from Books ran `click [2]` for real and was appraised, without a
    # Controller verdict of its own.
    assert run.env.executed[:2] == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    assert [url_after(c) for c in pilot.calls["appraiser"]][:2] == [BOOKS_URL, ORCHARD_URL]
    assert [url_after(c) for c in pilot.calls["controller"]][0] == BOOKS_URL
    by_action = {n.action_text: n for n in run.stored.nodes}
    assert by_action["click [2]"].parent_id == by_action["click [1]"].node_id
    # The Controller never calls the subtask complete: the plans are spent, and the Extractor reads the page reached.
    assert run.outcome.reason.startswith("subtask not complete after 0 refined plans")
    assert run.outcome.reason.endswith("the answer was read from the page reached")


def test_a_look_ahead_never_runs_a_destructive_action_nor_asks_about_it(tmp_path: Path) -> None:
    at_books = iter([act("click [3]")])  # the look-ahead's proposal at Books; later ones go to the book

    def explorer(call: Call) -> str:
        if page_of(call) == BOOKS_URL:
            return next(at_books, act("click [2]"))
        return {HOME_URL: act("click [1]")}.get(page_of(call), act("stop [x]"))

    pilot = Pilot(explorer=explorer)
    approver = ScriptedApprover([])
    run = run_pilot(tmp_path, pilot, approver, simulate=True, max_nodes=3)
    assert (BOOKS_URL, "click [3]") not in run.env.executed
    assert approver.requests == []
    assert run.outcome.answer == "1997"


def test_a_destructive_action_is_asked_about_and_refused_ones_do_not_run(tmp_path: Path) -> None:
    pilot = Pilot(explorer=lambda call: {HOME_URL: act("click [4]")}.get(page_of(call), act("stop [x]")),
                  complete_at=frozenset())
    approver = ScriptedApprover([False])
    # Two attempts and a refined plan: the user is asked once, whatever the Explorer proposes again.
    run = run_pilot(tmp_path, pilot, approver, max_nodes=2, max_attempts=2, max_replans=1)
    assert [(r.url, r.action_text) for r in approver.requests] == [(HOME_URL, "click [4]")]
    assert (HOME_URL, "click [4]") not in run.env.executed
    assert run.outcome.status == "failed"
    assert "not allowed to run `click [4]`" in run.outcome.reason


def test_an_approved_destructive_action_reroots_the_subtask_at_its_result(tmp_path: Path) -> None:
    seen: list[str] = []

    def explorer(call: Call) -> str:
        seen.append(page_of(call))
        return {HOME_URL: act("click [1]"), BOOKS_URL: act("click [3]")}.get(page_of(call), act("stop [x]"))

    pilot = Pilot(explorer=explorer, complete_at=frozenset(), scores={BOOKS_URL: (9, 9)})
    approver = ScriptedApprover([True])
    run = run_pilot(tmp_path, pilot, approver, max_nodes=3, max_attempts=1, max_replans=0)
    assert run.env.executed.count((BOOKS_URL, "click [3]")) == 1
    # Nothing before the purchase is explored again: every later Explorer prompt is at its result (Books, the fake
    # purchase leaves the page as it was) and none goes back to Home.
    after = seen[seen.index(BOOKS_URL) + 1:]
    assert after and set(after) == {BOOKS_URL}
    assert run.backtracker.moves == []


def test_ids_not_on_the_page_are_counted_and_never_run_and_the_node_is_given_up(tmp_path: Path) -> None:
    pilot = Pilot(explorer=lambda call: act("click [99]"))
    run = run_pilot(tmp_path, pilot, max_failed_tries=2, max_attempts=1, max_replans=0)
    assert run.env.executed == []
    assert len(pilot.calls["explorer"]) == 2
    # The plans spent, the Extractor read the page reached and found nothing there.
    assert run.outcome.status == "failed" and run.outcome.answer == ""
    assert run.outcome.reason.endswith("; the page reached does not answer the task")
    assert run.roles.mistakes() == {"policy": {"unknown_element": 2}}


def test_the_explorer_is_told_why_its_last_answer_could_not_be_run_and_a_different_one_goes_on(tmp_path: Path) -> None:
    """Asked again with the same prompt, a model at T = 0.3 answers the same; told why, it may answer otherwise."""
    def explorer(call: Call) -> str:
        if page_of(call) == HOME_URL:
            told = "Your last answer here did not work: `click [99]`: " in objective(call)
            return act("click [1]" if told else "click [99]")
        return {BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [done]")}.get(page_of(call), act("go_back"))

    pilot = Pilot(explorer=explorer)
    run = run_pilot(tmp_path, pilot, max_failed_tries=2)
    assert run.outcome.answer == "1997"
    assert run.roles.mistakes() == {"policy": {"unknown_element": 1}}


def test_once_an_answer_works_at_a_page_the_explorer_is_no_longer_told_of_the_one_that_did_not(tmp_path: Path) -> None:
    def explorer(call: Call) -> str:
        if page_of(call) != HOME_URL:
            return act("go_back")
        if "did not work" in objective(call):
            return act("click [1]")
        return act("click [2]" if "tried from this page (choose a different action): click [1]" in objective(call)
                   else "click [99]")

    # Books scores low and is not the subtask's end, so the search widens Home again after it.
    pilot = Pilot(explorer=explorer, complete_at=frozenset(), scores={BOOKS_URL: (1, 1)})
    run_pilot(tmp_path, pilot, branches=2, max_nodes=2, max_attempts=1, max_replans=0)
    at_home = [objective(c) for c in pilot.calls["explorer"] if page_of(c) == HOME_URL]
    assert len(at_home) == 3
    assert "did not work" not in at_home[0] and "did not work: `click [99]`" in at_home[1]
    assert "did not work" not in at_home[2] and at_home[2].rstrip().endswith("click [1]")


def test_an_action_that_changes_nothing_is_not_appraised_and_the_explorer_is_told(tmp_path: Path) -> None:
    """Hovering Orchard's link leaves Books as it was: no node to appraise or explore from, and the Explorer's next
    prompt there names it as tried (a real 1.5B model clicked one article three times in a row)."""
    def explorer(call: Call) -> str:
        if page_of(call) == BOOKS_URL:
            return act("click [2]" if "tried from this page (choose a different action): hover [2]" in objective(call)
                       else "hover [2]")
        return {HOME_URL: act("click [1]"), ORCHARD_URL: act("stop [done]")}.get(page_of(call), act("go_back"))

    pilot = Pilot(explorer=explorer)
    run = run_pilot(tmp_path, pilot)
    assert run.outcome.answer == "1997"
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "hover [2]"), (BOOKS_URL, "click [2]")]
    assert [url_after(c) for c in pilot.calls["appraiser"]] == [BOOKS_URL, ORCHARD_URL]
    hover = next(n for n in run.stored.nodes if n.action_text == "hover [2]")
    assert hover.status == "dead"
    assert hover.note == f"changed nothing on the page of #{hover.parent_id}"
    assert hover.node_id not in run.stored.trajectory


def test_a_refined_plan_that_repeats_a_failed_subtask_carries_the_controllers_reflection_on_it(tmp_path: Path) -> None:
    """Without it the Explorer gets, for the same subtask on the same page, the very prompt it failed with."""
    seen: list[tuple[int, str]] = []

    def explorer(call: Call) -> str:
        seen.append((len(pilot.calls["planner"]), objective(call)))
        return {HOME_URL: act("click [2]")}.get(page_of(call), act("go_back"))

    pilot = Pilot(explorer=explorer, complete_at=frozenset())
    run_pilot(tmp_path, pilot, max_nodes=1, max_attempts=1, max_replans=1)
    refined = [o for plans, o in seen if plans == 2]
    assert "Reflection: this is not the book page" not in seen[0][1]
    assert refined and "Reflection: this is not the book page" in refined[0]


def test_an_unreadable_plan_makes_the_whole_task_one_subtask(tmp_path: Path) -> None:
    pilot = Pilot(plans=["I will look around the site."])
    run = run_pilot(tmp_path, pilot)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert run.roles.mistakes() == {"planner": {"unreadable_verdict": 1}}
    assert "Current subtask: When was The Quiet Orchard published?" in objective(pilot.calls["explorer"][0])


def test_a_start_no_replay_can_rebuild_makes_the_planner_refine_from_where_the_tab_is(tmp_path: Path) -> None:
    def explorer(call: Call) -> str:
        if "Open the book" in objective(call):
            return {HOME_URL: act("click [2]")}.get(page_of(call), act("stop [x]"))
        return {ABOUT_URL: act("click [1]"), HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]")}.get(
            page_of(call), act("stop [x]"))

    pilot = Pilot(plans=["Subtask 1: Open the book\nSubtask 2: Extract: the year",
                         "Subtask 1: Go home, then Books, then the book\nSubtask 2: Extract: the year"],
                  explorer=explorer, scores={ABOUT_URL: (3, 3), HOME_URL: (5, 5), BOOKS_URL: (8, 7),
                                             ORCHARD_URL: (9, 10)})
    run = search_site(tmp_path, MctsSearch(MctsConfig(simulate=False, max_nodes=3)), pilot.policy, pilot.value,
                      fail={0})
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert len(pilot.calls["planner"]) == 2
    assert "cannot go back to the subtask's start #0" in run.shown


def test_information_found_nowhere_is_answered_n_a_with_the_reason(tmp_path: Path) -> None:
    """WebArena's answer for what does not exist: after the plans are spent, an Extract subtask that found nothing
    makes the answer N/A instead of no answer; an extraction is not retried on the page that just failed it."""
    pilot = Pilot(plans=["Subtask 1: Extract: the book's publisher"])
    pilot_policy = pilot.policy

    def policy(call: Call) -> str:
        return "Nothing about a publisher here.\nAnswer: N/A" if agent(call) == "extractor" else pilot_policy(call)

    pilot.policy = policy  # type: ignore[method-assign]
    run = run_pilot(tmp_path, pilot, max_replans=1)
    assert run.outcome.status == "finished" and run.outcome.answer == "N/A"
    assert "the information was not found" in run.outcome.reason
    # The first plan and one refined plan, each read once: no second attempt at the same page.
    assert len(pilot.calls["planner"]) == 2


def test_a_retry_may_widen_where_the_first_attempt_used_every_branch(tmp_path: Path) -> None:
    """The first attempt spends both of Home's branches (About, then Contact, both scored 1): the second attempt has
    room for its own at Home (Books), instead of finding Home full and proposing nothing."""
    tries = iter([act("click [2]"), act("click [3]"), act("click [1]")])

    def explorer(call: Call) -> str:
        if page_of(call) == HOME_URL:
            return next(tries, act("click [1]"))
        return {BOOKS_URL: act("click [2]")}.get(page_of(call), act("stop [x]"))

    pilot = Pilot(explorer=explorer)
    run = run_pilot(tmp_path, pilot, max_nodes=2, branches=2, max_replans=0)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert [a for url, a in run.env.executed if url == HOME_URL] == ["click [2]", "click [3]", "click [1]"]


def test_a_stop_below_the_subtasks_start_is_a_dead_end_not_the_end_of_the_search(tmp_path: Path) -> None:
    """About is scored well enough to be expanded, and the Explorer sees nothing to do there: the search goes on from
    Home (Books) instead of ending the subtask at About."""
    home = iter([act("click [2]"), act("click [1]")])

    def explorer(call: Call) -> str:
        if page_of(call) == HOME_URL:
            return next(home, act("click [1]"))
        return {BOOKS_URL: act("click [2]")}.get(page_of(call), act("stop [nothing here]"))

    pilot = Pilot(explorer=explorer, scores={ABOUT_URL: (4, 4), BOOKS_URL: (8, 7), ORCHARD_URL: (9, 10)})
    run = run_pilot(tmp_path, pilot, max_attempts=1, max_replans=0)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert [a for url, a in run.env.executed if url == HOME_URL] == ["click [2]", "click [1]"]


class _Extracting(Pilot):
    """The Extractor answers in turn with the given replies."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__()
        self.replies = replies

    def policy(self, call: Call) -> str:
        # A second try is the Extractor's conversation with the reason last.
        if any(re.search(r"^You are the Extractor", m.content, re.M) for m in call.messages if m.role == "user"):
            self.calls.setdefault("extractor", []).append(call)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return super().policy(call)


def test_the_extractors_made_up_number_is_refused_and_read_again(tmp_path: Path) -> None:
    """As every strategy's answer: a number no page on the way showed is refused, with the reason; the Extractor
    reads again."""
    pilot = _Extracting(["Answer: 1999", "Answer: 1997"])
    run = run_pilot(tmp_path / "a", pilot)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    [first, again] = pilot.calls["extractor"]
    assert first.last.endswith(again.messages[-3].content[-200:])
    assert "no page on the way here shows 1999" in again.last and "1999" in again.messages[-2].content
    assert run.roles.mistakes()["planner"] == {"ungrounded_answer": 1}
    # The same number given again is taken (a count the model made); another made-up one is no answer.
    assert run_pilot(tmp_path / "b", _Extracting(["Answer: 3"])).outcome.answer == "3"
    made_up = run_pilot(tmp_path / "c", _Extracting(["Answer: 1999", "Answer: 2001", "Answer: N/A"]))
    assert made_up.outcome.answer not in ("1999", "2001")
    assert made_up.roles.mistakes()["planner"] == {"ungrounded_answer": 2}
