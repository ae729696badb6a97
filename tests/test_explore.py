"""NNetNav's exploration (explore/): the agents' readers, what an episode may run, where it is judged, pruning, and the
demonstrations it leaves, on the small fake site.

Home ([1] Books, [2] About, [3] Contact, [4] button Subscribe) -> Books ([1] Home, [2] Orchard, [3] button Buy all) ->
Orchard ([2] 'Published 1997'). The policy model's client answers the explorer and the summariser, labeller and
relabeller; the value model's, the outcome reward model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from branchwise.actions import Click
from branchwise.core.budget import BudgetExhausted, Limits, RunBudget
from branchwise.explore.episode import ExploreConfig, ExploreEpisode, account_control
from branchwise.explore.nnetnav import (
    Label,
    NNetNavPrompts,
    Step,
    explore_objective,
    label_messages,
    parse_change,
    parse_label,
    parse_relabel,
    parse_score,
)
from branchwise.safety.sites import SiteRules
from branchwise.search.urlcheck import UrlCheck

from fake_models import Call
from fake_site import BOOKS_URL, HOME_URL, ORCHARD_URL, PAGES, SHELF_URL, SiteRun, act, page_of, search_site
from test_search_generate import DeadAddresses

SUMMARY, LABEL, REWARD, RELABEL = ("state-change summariser", "instruction labeller", "outcome reward model",
                                   "writing a demonstration")


def role(call: Call) -> str:
    head = call.messages[0].content.splitlines()[0]
    return next((name for name in (SUMMARY, LABEL, REWARD, RELABEL) if name in head), "explorer")


def test_readers_take_the_last_labelled_line_and_tolerate_decoration() -> None:
    assert parse_change("The Books list opened.\nState change: **a list of books appeared**") == (
        "a list of books appeared")
    assert parse_change("The page   scrolled.") == "The page scrolled."
    assert parse_label("Instruction: Find the year\nAnswer: 1997") == Label("Find the year", "1997")
    assert parse_label("**Instruction:** Open the books\nAnswer: N/A") == Label("Open the books", "")
    assert parse_label("I am not sure what this was.") is None
    assert parse_score("Mostly on task.\nScore: 4/5") == 4
    assert parse_score("Score: 7") is None and parse_score("no score") is None
    # The number alone, as the real 1.5B reward model once answered; not a number inside a sentence.
    assert parse_score("4") == 4 and parse_score(" **3/5** ") == 3 and parse_score("7") is None
    assert parse_score("It did 4 of the steps well.") is None
    assert parse_relabel("Step 1: Books hold the book\nstep 3: done\nStep 1: the Books link", 3) == [
        "the Books link", "", "done"]
    assert parse_relabel("**Step 1:** open Books", 1) == ["open Books"]
    # An instruction that asks nothing gets no answer, whatever filler the labeller writes there.
    assert parse_label("Instruction: Open the books\nAnswer: None (not a question)") == Label("Open the books", "")
    assert parse_label("Instruction: Open the books\nAnswer: <the answer>") == Label("Open the books", "")


def test_the_labeller_sees_every_step_with_what_it_changed_and_the_objective_names_the_persona() -> None:
    steps = [Step(HOME_URL, "click [1]", "the Books list opened"), Step(BOOKS_URL, "click [2]", "a book page")]
    user = label_messages("books.example", steps, ORCHARD_URL, PAGES[ORCHARD_URL].text, NNetNavPrompts())[1].content
    assert "1. click [1] (on https://books.example/) -> the Books list opened" in user
    assert "'Published 1997'" in user
    objective = explore_objective("a careful reader", "books.example")
    assert "as a careful reader would" in objective and "Do not sign up, sign in, buy" in objective
    assert "Take at least 4 actions" in objective and "at least 2 actions" in explore_objective("a", "b", 2)


def test_sign_up_sign_in_and_subscribe_controls_are_never_used() -> None:
    home = PAGES[HOME_URL]
    assert account_control(Click(4), home) is not None  # button 'Subscribe'
    assert account_control(Click(1), home) is None


def episode_of(**config: object) -> ExploreEpisode:
    return ExploreEpisode(ExploreConfig.model_validate({"relabel_every": 2, "delay_s": 0} | config),
                          "a careful reader", "books.example")


def run_episode(tmp_path: Path, moves: dict[str, list[str]], score: int = 5, budget: RunBudget | None = None,
                episode: ExploreEpisode | None = None, url_check: UrlCheck | None = None,
                label: str = "Find when The Quiet Orchard was published",
                **config: object) -> tuple[SiteRun, ExploreEpisode, list[Call]]:
    queues = {url: list(answers) for url, answers in moves.items()}
    prompts: list[Call] = []

    def policy(call: Call) -> str:
        kind = role(call)
        if kind == "explorer":
            prompts.append(call)
            queue = queues[page_of(call)]
            return queue.pop(0) if len(queue) > 1 else queue[0]
        if kind == SUMMARY:
            return "State change: another page opened"
        if kind == LABEL:
            return f"Instruction: {label}\nAnswer: 1997"
        return "Step 1: The book is under Books.\nStep 2: The book's page has its date."

    episode = episode or episode_of(**config)
    run = search_site(tmp_path, episode, policy, lambda call: f"Done well.\nScore: {score}", budget=budget,
                      url_check=url_check)
    return run, episode, prompts


def test_an_episode_runs_only_what_changes_nothing_and_keeps_what_scored_well(tmp_path: Path) -> None:
    run, episode, prompts = run_episode(tmp_path, {
        HOME_URL: [act("click [4]"), act("click [1]")],
        BOOKS_URL: [act("click [3]"), act("click [2]")],
        ORCHARD_URL: [act("stop [done]")],
    })
    # Subscribe (an account control) and Buy all (destructive) were refused without asking anyone.
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    assert "was not run: exploring never uses sign-up, sign-in or subscribe controls" in prompts[1].last
    assert "`click [3]` was not run: it is destructive" in prompts[3].last
    # The steps taken are told in words, the element named and its id (Books' numbering, not Orchard's) left out.
    at_orchard = [p.last for p in prompts if "URL: " + ORCHARD_URL in p.last]
    assert at_orchard and "\n1. clicked link 'Books'" in at_orchard[0]
    assert "\n2. clicked link 'Orchard'" in at_orchard[0]
    [demo] = episode.demos
    assert demo.site == "books.example" and demo.persona == "a careful reader" and demo.score == 5
    assert demo.instruction == "Find when The Quiet Orchard was published"
    assert [(s.url, s.action_text) for s in demo.steps] == [
        (HOME_URL, "click [1]"), (BOOKS_URL, "click [2]"), (ORCHARD_URL, "stop [1997]")]
    assert demo.steps[0].thought == "The book is under Books." and "[1] link 'Books'" in demo.steps[0].observation_text
    assert run.outcome.answer == "1 demonstration(s) from 2 step(s)"


def test_an_episode_explores_the_one_link_in_a_heading_and_refuses_the_buy_button_in_a_card(tmp_path: Path) -> None:
    """What the model named is moved onto the one control inside it before exploring checks it: the heading's link
    is explored, the card's Buy button refused as destructive, by its own id."""
    run, _, prompts = run_episode(tmp_path, {
        HOME_URL: [act(f"goto [{SHELF_URL}]")],
        SHELF_URL: [act("click [3]"), act("click [1]")],
        ORCHARD_URL: [act("stop [done]")],
    })
    assert run.env.executed == [(HOME_URL, f"goto [{SHELF_URL}]"), (SHELF_URL, "click [2]")]
    assert any("`click [4]` was not run: it is destructive" in p.last for p in prompts)
    assert run.roles.policy.mistakes["retargeted"] == 2


def test_a_low_score_prunes_the_episode_and_keeps_nothing(tmp_path: Path) -> None:
    run, episode, _ = run_episode(tmp_path, {
        HOME_URL: [act("click [1]")], BOOKS_URL: [act("click [2]")], ORCHARD_URL: [act("click [3]")],
    }, score=2, max_steps=6)
    assert episode.demos == []
    assert "scored 2 (< 4)" in episode.pruned
    assert len(run.env.executed) == 2  # it ended at the judgement, not at the step limit


def test_too_many_refused_actions_in_a_row_end_the_episode(tmp_path: Path) -> None:
    run, episode, prompts = run_episode(tmp_path, {HOME_URL: [act("click [4]")]}, max_invalid_in_a_row=3)
    assert run.env.executed == [] and len(prompts) == 3 and episode.demos == []


def test_what_an_episode_learnt_is_kept_when_a_limit_ends_it(tmp_path: Path) -> None:
    """The run's model-call limit (9: two steps, their judgement and write-up take 7) stops the episode in its fourth
    step: the demonstration kept after the second stays."""
    episode = episode_of(max_steps=8)
    with pytest.raises(BudgetExhausted):
        run_episode(tmp_path, {HOME_URL: [act("click [1]")], BOOKS_URL: [act("click [2]")],
                               ORCHARD_URL: [act("click [3]")]},
                    budget=RunBudget(Limits(max_model_calls=9)), episode=episode)
    [demo] = episode.demos
    assert demo.instruction == "Find when The Quiet Orchard was published" and len(demo.steps) == 3


def test_an_address_off_the_explored_site_is_refused_before_it_runs(tmp_path: Path) -> None:
    episode = ExploreEpisode(ExploreConfig(relabel_every=2, delay_s=0, max_invalid_in_a_row=2), "a careful reader",
                             "books.example", SiteRules.parse(["books.example"]))
    run, _, prompts = run_episode(tmp_path, {HOME_URL: [act("goto [https://elsewhere.example/]")]}, episode=episode)
    assert run.env.executed == []
    assert "it leads off the site being explored" in prompts[1].last and "elsewhere.example" in prompts[1].last


def test_a_stop_before_the_first_labelling_is_refused_and_exploring_goes_on(tmp_path: Path) -> None:
    """NNetNav asks for at least 4 actions before a stop (2 here): a small model stopping at once learnt nothing."""
    run, episode, prompts = run_episode(tmp_path, {
        HOME_URL: [act("stop [done]"), act("click [1]")], BOOKS_URL: [act("stop [done]"), act("click [2]")],
        ORCHARD_URL: [act("stop [done]")]})
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    assert "`stop [done]` was not run: explore further first; stop only after at least 2 actions" in prompts[1].last
    assert len(prompts) == 5 and len(episode.demos) == 1  # the stop after two actions ended it
    assert run.roles.policy.mistakes == {"invalid_action": 2}


def test_an_address_on_the_site_that_does_not_load_is_refused_with_the_reason(tmp_path: Path) -> None:
    dead = "https://books.example/branches"
    check = DeadAddresses({dead: f"{dead} answers HTTP 404"})
    run, episode, prompts = run_episode(tmp_path, {
        HOME_URL: [act(f"goto [{dead}]"), act("click [1]")], BOOKS_URL: [act("click [2]")],
        ORCHARD_URL: [act("stop [done]")]}, url_check=check)
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    assert f"`goto [{dead}]` was not run: {dead} answers HTTP 404" in prompts[1].last
    assert check.asked == [dead] and len(episode.demos) == 1


def test_going_to_the_page_the_tab_shows_is_refused(tmp_path: Path) -> None:
    """A real 1.5B model's first two exploring moves were `goto` the home page it was on: they teach nothing."""
    run, _, prompts = run_episode(tmp_path, {
        HOME_URL: [act("goto [https://books.example]"), act("click [1]")], BOOKS_URL: [act("click [2]")],
        ORCHARD_URL: [act("stop [done]")]})
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    assert "`goto [https://books.example]` was not run: the tab already shows this page" in prompts[1].last
    assert "not exploring `goto [https://books.example]`: the tab already shows this page" in run.shown


@pytest.mark.parametrize("tab_action", ["new_tab", "tab_focus [0]", "close_tab"])
def test_tab_actions_are_refused_an_episode_works_in_its_one_tab(tmp_path: Path, tab_action: str) -> None:
    """A real 1.5B model opened a new, blank tab three times in a row and explored nothing."""
    run, episode, prompts = run_episode(tmp_path, {
        HOME_URL: [act(tab_action), act("click [1]")], BOOKS_URL: [act("click [2]")],
        ORCHARD_URL: [act("stop [done]")]})
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    assert f"`{tab_action}` was not run: exploring works in this one tab" in prompts[1].last
    assert len(episode.demos) == 1


def test_every_refusal_on_a_page_is_told_back_until_a_step_is_taken(tmp_path: Path) -> None:
    """Told only the last refusal, a real 1.5B model went back to the one before it (`goto` the same 404 twice, `stop`
    twice) and used up its five tries on a page."""
    run, _, prompts = run_episode(tmp_path, {
        HOME_URL: [act("stop [done]"), act("click [4]"), act("new_tab"), act("click [1]")],
        BOOKS_URL: [act("click [3]"), act("click [2]")], ORCHARD_URL: [act("stop [done]")]})
    assert run.env.executed == [(HOME_URL, "click [1]"), (BOOKS_URL, "click [2]")]
    fourth = prompts[3].last
    assert "NOT RUN ON THIS PAGE, do not repeat them:\n- `stop [done]` was not run: explore further first" in fourth
    assert "\n- `click [4]` was not run: exploring never uses sign-up" in fourth
    assert "\n- `new_tab` was not run: exploring works in this one tab" in fourth
    # A step taken: the home page's refusals are not told on Books, only Books' own.
    at_books = [p.last for p in prompts if "URL: " + BOOKS_URL in p.last]
    assert "NOT RUN ON THIS PAGE" not in at_books[0] and "was not run" not in at_books[0]
    assert "- `click [3]` was not run: it is destructive" in at_books[1] and "click [4]" not in at_books[1]


def test_the_prompt_says_up_front_that_a_new_tab_or_an_early_stop_will_not_run(tmp_path: Path) -> None:
    _, _, prompts = run_episode(tmp_path, {
        HOME_URL: [act("click [1]")], BOOKS_URL: [act("click [2]")], ORCHARD_URL: [act("click [1]")]},
        max_steps=3, relabel_every=2)
    not_possible = [next(line for line in p.last.splitlines() if line.startswith("NOT POSSIBLE HERE:"))
                    for p in prompts]
    assert all("new_tab (exploring works in this one tab)" in line for line in not_possible)
    assert "stop (not before 2 actions; 0 taken so far)" in not_possible[0]
    assert "stop (not before 2 actions; 1 taken so far)" in not_possible[1]
    assert "stop" not in not_possible[2].replace("new_tab", ""), "after two actions a stop may end the episode"


def test_the_labellers_prompt_quotes_no_instruction_for_a_small_model_to_copy() -> None:
    """With two example instructions in its prompt (NNetNav's has four), the real 1.5B labeller answered with one of
    them in every episode that reached a labelling, whatever the steps (BENCHMARKS.md); told only the form, it wrote
    "What is the price of the product 'The Silent Archive' by Oskar Lindqvist?" for the steps that opened that page."""
    system = label_messages("books.example", [Step(HOME_URL, "click [1]", "the Books list opened")], BOOKS_URL,
                            PAGES[BOOKS_URL].text, NNetNavPrompts())[0].content
    assert '"' not in system and "one short sentence" in " ".join(system.split())


def test_a_label_written_as_a_question_or_left_as_the_placeholder() -> None:
    """How the real 1.5B labeller also answered: a `Question:` line, or the question alone."""
    assert parse_label("**Question:** Which product page did I view first?\n**Answer:** The Silent Archive") == Label(
        "Which product page did I view first?", "The Silent Archive")
    assert parse_label("What is the name of the project you are viewing?") == Label(
        "What is the name of the project you are viewing?")
    assert parse_label("To count the reviews you would open the product page.\nThen read the table?") is None
    assert parse_label("Instruction: <the instruction>\nAnswer: <the answer>") is None
    # A how-to question (the real 1.5B labeller's, shortened), answered with steps: no answer to stop with, so
    # `stop [done]`, not `stop [To find a specific question …, you can follow these steps:]`.
    assert parse_label("Instruction: How can I find a question about Piranesi?\n\nAnswer: To find a question about "
                       "Piranesi, you can follow these steps:\n1. Go to the search page.\n2. Type \"Piranesi\" in "
                       "the search box.") == Label("How can I find a question about Piranesi?")
