"""The simulated model (`--model simulated:E`): reads the backend's real prompts, follows each task's reference
solution on pages captured from the sandbox sites, errs at rate E, and judges truthfully unless it errs."""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import SecretStr

from branchwise.actions import (
    Action,
    Click,
    CloseTab,
    GoBack,
    GoForward,
    Goto,
    Hover,
    NewTab,
    Press,
    Scroll,
    SelectOption,
    Stop,
    TabFocus,
    Type,
    parse_response,
)
from branchwise.harness.evaluators import fuzzy_match, ua_match
from branchwise.harness.simulated import MissingReferenceSolution, SimulatedEngine, SimulatedSpec
from branchwise.harness.simulated.answers import wrong_verdict
from branchwise.harness.simulated.page import parse_page
from branchwise.harness.simulated.progress import Position, Progress, same_action, signature
from branchwise.harness.simulated.prompts import read_request
from branchwise.harness.tasks import SolutionStep, TaskConfig, load_tasks
from branchwise.llm import ChatMessage, LLMClient, LLMConfig
from branchwise.policy.prompts import build_cot_messages
from branchwise.policy.steps import step_words
from branchwise.scripted_model import Prompt, PromptMessage, ScriptedModelServer
from branchwise.search.generate import HistoryEntry, history_text
from branchwise.search.rephrase import build_rephrase_messages
from branchwise.search.reward import build_checklist_messages, build_judge_messages, label_scores_from_text
from branchwise.search.value import build_value_messages, parse_value
from branchwise.search.webpilot import (
    Subtask,
    WebPilotPrompts,
    appraise_messages,
    control_messages,
    extract_messages,
    parse_appraisal,
    parse_control,
    parse_extraction,
    parse_plan,
    plan_messages,
)

REPO = Path(__file__).parent.parent
PAGES = Path(__file__).parent / "fixtures" / "simulated"


def page_text(name: str) -> str:
    return (PAGES / f"{name}.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tasks() -> dict[int, TaskConfig]:
    return {t.task_id: t for t in load_tasks([REPO / "tasks" / "dev"])}


def prompt(messages: Sequence[ChatMessage]) -> Prompt:
    return Prompt(tuple(PromptMessage(m.role, m.content) for m in messages))


def policy_prompt(task: TaskConfig, page: str, history: Sequence[str] = (), greedy: bool = False,
                  seen: str = "") -> Prompt:
    """`seen`: what each step of a search's history says its page showed."""
    if greedy:
        previous = history[-1] if history else None
    else:
        previous = history_text([HistoryEntry(seen, a) for a in history], 5)
    return prompt(build_cot_messages(task.intent, page, parse_page(page).url, previous))


def answer(engine: SimulatedEngine, request: Prompt, n: int = 1) -> list[str]:
    return [r.text for r in engine.select(request, n).replies]


def action_of(text: str) -> object:
    return parse_response(text).action


# -- reading pages and prompts ------------------------------------------------------------------------------------


def test_a_page_is_read_with_values_ticks_and_masks() -> None:
    page = parse_page(page_text("shop_checkout"))
    assert page.url.endswith("/checkout")
    card = page.find("textbox", "Card number")
    assert card is not None and card.value == "••••"
    name = page.find("textbox", "Full name")
    assert name is not None and name.value == "Emma Lopez"
    standard = page.find("radio", "Standard shipping (3–5 business days): $5.99")
    express = page.find("radio", "Express shipping (1–2 business days): $14.99")
    assert standard is not None and standard.checked and express is not None and not express.checked
    assert page.find("textbox", "Expiry date (MM/YY)") is not None
    assert page.find("button", "Place order") is not None
    assert page.find("link", "No such link") is None


def test_each_role_prompt_is_recognised_with_its_page_and_last_action(tasks: dict[int, TaskConfig]) -> None:
    task, page = tasks[1037], page_text("shop_checkout")
    history = ["type [3] [Starfort Wooden Card Game] [1]", "click [563]"]
    policy = read_request(policy_prompt(task, page, history))
    assert policy.kind == "policy" and policy.last_step == signature(Click(563)) and not policy.start
    assert "[1313] button 'Place order'" in policy.page
    assert read_request(policy_prompt(task, page, greedy=True)).start

    value = read_request(prompt(build_value_messages(task.intent, page, "http://x/checkout", history, "$5")))
    assert value.kind == "value" and value.answer == "$5" and value.last_step == signature(Click(563))
    assert "Place order" in value.page
    unanswered = read_request(prompt(build_value_messages(task.intent, page, "http://x/", [], None)))
    assert unanswered.answer is None and unanswered.start

    judge = read_request(prompt(build_judge_messages(task.intent, history, page, ["a", "b"], "why", "click [1313]")))
    assert judge.kind == "reward" and judge.proposed == Click(1313) and judge.last_step == signature(Click(563))
    assert read_request(prompt(build_checklist_messages(task.intent, "http://x/", page))).kind == "checklist"
    assert read_request(prompt(build_rephrase_messages(task.intent))).kind == "rephrase"
    assert read_request(prompt([ChatMessage(role="user", content="Hello")])).kind == "unknown"


# -- where a page stands in the reference solution ----------------------------------------------------------------


def test_the_starting_page_starts_the_solution_even_when_a_later_step_is_on_it(tasks: dict[int, TaskConfig]) -> None:
    # "Star the Analytics Etl project": Explore first, although the dashboard has a "Filter by name" box too.
    steps = tuple(tasks[3034].reference_solution.steps)  # type: ignore[union-attr]
    page = parse_page(page_text("tracker_dashboard"))
    assert Progress(steps).position(page, None, start=True).index == 0
    assert Progress(steps).position(page, signature(GoBack()), start=False).index == 1, "read off the page alone"


def test_a_remembered_step_decides_the_position_and_a_masked_secret_still_matches(
        tasks: dict[int, TaskConfig]) -> None:
    steps = tuple(tasks[1037].reference_solution.steps)  # type: ignore[union-attr]
    page = parse_page(page_text("shop_checkout"))
    progress = Progress(steps)
    card = Type(1163, "4242 4242 4242 4242", press_enter=False)
    progress.remember(card, 6, "textbox 'Card number'")
    expiry = steps.index(next(s for s in steps if s.name == "Expiry date (MM/YY)"))
    assert progress.position(page, signature(Type(1163, "••••••", press_enter=False))).index == expiry
    assert progress.position(page, signature(card)).on_path
    # As a policy prompt's history names it: in words, secret masked.
    in_words = signature(Type(1163, "••••••", press_enter=False), "textbox 'Card number'")
    assert progress.position(page, in_words).index == expiry


def test_a_step_named_like_an_earlier_one_keeps_both_positions() -> None:
    """`click link 'Next'` twice through a listing: the history's words are the same after either click, and the
    page tells which one it was."""
    steps = (SolutionStep(action="click", role="link", name="Next"),
             SolutionStep(action="click", role="link", name="Next"),
             SolutionStep(action="click", role="link", name="Item 21"))
    progress = Progress(steps)
    progress.remember(Click(5), 0, "link 'Next'")
    progress.remember(Click(8), 1, "link 'Next'")
    in_words = signature(Click(9), "link 'Next'")
    second = parse_page("URL: http://x/?page=2\n\n[1] RootWebArea 'Items'\n\t[9] link 'Next'")
    third = parse_page("URL: http://x/?page=3\n\n[1] RootWebArea 'Items'\n\t[4] link 'Item 21'")
    assert progress.position(second, in_words) == Position(1, on_path=True)
    assert progress.position(third, in_words) == Position(2, on_path=True)


@pytest.mark.parametrize("action", [
    Click(7), Hover(7), Type(7, "it's \"x\"", press_enter=True), Type(7, "x", press_enter=False),
    Type(7, "s3cret", press_enter=False, secret=True), Press("Enter", 7), Press("Enter"),
    SelectOption(7, ("Price: low to high", "a, b")), Scroll("up"), Goto("http://x/a b"), GoBack(), GoForward(),
    NewTab(), NewTab("http://x/"), TabFocus(1), CloseTab()])
def test_a_history_in_words_is_read_as_the_step_it_names(tasks: dict[int, TaskConfig], action: Action) -> None:
    """The simulated model reads policy/steps.py's words back as the step they name, so it knows where it is."""
    element = "link \"Bob's page\""
    words = step_words(action, element if action.element_id is not None else "")
    page = page_text("shop_checkout")
    request = read_request(policy_prompt(tasks[1037], page, ["clicked link 'Home'", words], seen="A page (2 items)."))
    assert "2. " + words + " (seen: A page (2 items).)" in request.page
    assert request.last_step == signature(action, element if action.element_id is not None else None), words
    greedy = read_request(policy_prompt(tasks[1037], page, [words + " (done, but the page did not change)"],
                                        greedy=True))
    assert greedy.last_step == request.last_step


def test_off_the_path_the_first_empty_field_comes_before_the_submit_button(tasks: dict[int, TaskConfig]) -> None:
    steps = tuple(tasks[1037].reference_solution.steps)  # type: ignore[union-attr]
    page = parse_page(page_text("shop_checkout"))
    position = Progress(steps).position(page, signature(Click(9999)))
    # Shipping is ticked and the card is filled: the expiry date is next, not the search box nor "Place order".
    assert position.index is not None and steps[position.index].name == "Expiry date (MM/YY)"
    assert not position.on_path


# -- answers --------------------------------------------------------------------------------------------------------


def test_without_errors_the_policy_takes_the_reference_steps_and_then_answers(tasks: dict[int, TaskConfig]) -> None:
    engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=0.0))
    task, page = tasks[3034], page_text("tracker_dashboard")
    first = answer(engine, policy_prompt(task, page, greedy=True))[0]
    assert action_of(first) == Click(27), first  # [27] link 'Explore'
    # The page that click led to is known to be one step on, whatever it shows.
    second = answer(engine, policy_prompt(task, page, ["click [27]"]))[0]
    assert action_of(second) == Type(4, "Analytics Etl", press_enter=True)

    shop = page_text("shop_checkout")
    garden = answer(engine, policy_prompt(tasks[1002], shop, greedy=True))[0]  # "Show me ... the Garden category"
    assert action_of(garden) == Click(1218), garden
    assert action_of(answer(engine, policy_prompt(tasks[1002], page, ["click [1218]"]))[0]) == Stop("Done.")
    # "What is the price of the Acme Pocket Teleporter?" has no steps: not available, at once.
    assert action_of(answer(engine, policy_prompt(tasks[1003], shop, greedy=True))[0]) == Stop("N/A")


def test_at_error_rate_e_about_that_share_of_policy_answers_are_random_actions_of_the_page(
        tasks: dict[int, TaskConfig]) -> None:
    page = page_text("forum_home")
    ids = {e.id for e in parse_page(page).elements}
    for rate in (0.0, 0.3, 1.0):
        engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=rate, seed=7))
        replies = answer(engine, policy_prompt(tasks[2019], page, greedy=True), n=400)
        actions = [action_of(r) for r in replies]
        reference = sum(a == Click(72) for a in actions)  # [72] link 'Forums', the first reference step
        assert abs(reference / len(actions) - (1 - rate)) < 0.06, (rate, reference)
        for action in actions:
            target = getattr(action, "element_id", None)
            assert target is None or target in ids, action


def test_the_same_seed_gives_the_same_answers_and_another_seed_other_ones(tasks: dict[int, TaskConfig]) -> None:
    def run(seed: int) -> list[str]:
        engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=0.5, seed=seed))
        request = policy_prompt(tasks[2019], page_text("forum_home"), greedy=True)
        return [text for _ in range(5) for text in answer(engine, request, n=4)]

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_the_value_judge_tells_the_truth_unless_it_errs(tasks: dict[int, TaskConfig]) -> None:
    task, page = tasks[1001], page_text("forum_home")

    def value(rate: float, answer_text: str | None) -> float | None:
        engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=rate))
        messages = build_value_messages(task.intent, page, "http://x/", ["click [1]"], answer_text)
        return parse_value(answer(engine, prompt(messages))[0])

    assert value(0.0, "It costs $34.50.") == 1.0
    assert value(0.0, "It costs $12.00.") == 0.0
    # A wrong verdict is one step away from the truth: never a wrong answer taken for a success.
    assert value(1.0, "It costs $34.50.") == 0.5
    assert value(1.0, "It costs $12.00.") == 0.5


def test_a_wrong_value_verdict_is_a_neighbour_of_the_truth() -> None:
    rng = random.Random(0)
    success, on_track, off_track = ("success", "yes"), ("failure", "yes"), ("failure", "no")
    assert {wrong_verdict(success, rng) for _ in range(50)} == {on_track}
    assert {wrong_verdict(off_track, rng) for _ in range(50)} == {on_track}
    assert {wrong_verdict(on_track, rng) for _ in range(50)} == {success, off_track}


def test_the_reward_judge_marks_the_reference_step_as_progress_unless_it_errs(tasks: dict[int, TaskConfig]) -> None:
    task, page = tasks[3034], page_text("tracker_dashboard")
    checklist_engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=0.0))
    checklist_text = answer(checklist_engine, prompt(build_checklist_messages(task.intent, "http://x/", page)))[0]
    items = [line for line in checklist_text.splitlines() if line.startswith("Checklist ")]
    assert len(items) == len(task.reference_solution.steps)  # type: ignore[union-attr]

    def scores(rate: float, action: str) -> list[float] | None:
        engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=rate))
        messages = build_judge_messages(task.intent, [], page, items, "because", action)
        return label_scores_from_text(answer(engine, prompt(messages))[0], len(items))

    right, wrong = scores(0.0, "click [27]"), scores(0.0, "click [25]")
    assert right is not None and wrong is not None and sum(right) > sum(wrong)
    assert scores(1.0, "click [27]") == wrong and scores(1.0, "click [25]") == right


def test_tasks_without_a_reference_solution_and_bad_specs_are_refused(tasks: dict[int, TaskConfig]) -> None:
    bare = tasks[1001].model_copy(update={"reference_solution": None})
    with pytest.raises(MissingReferenceSolution, match="1001"):
        SimulatedEngine([bare], SimulatedSpec(error_rate=0.1))
    for text in ("simulated", "simulated:x", "simulated:1.5", "simulated:0.1:y", "scripted:0.1"):
        with pytest.raises(ValueError):
            SimulatedSpec.parse(text)
    assert SimulatedSpec.parse("simulated:0.30") == SimulatedSpec(error_rate=0.3)
    assert SimulatedSpec.parse("simulated:0.3:5").name == "simulated:0.3:5"


def test_over_http_it_is_labelled_simulated_and_grades_answers_truthfully(tasks: dict[int, TaskConfig]) -> None:
    engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=1.0))

    async def main() -> tuple[float, float, float, float, str]:
        with ScriptedModelServer(engine) as server:
            config = LLMConfig(base_url=server.base_url, api_key=SecretStr("x"), model="simulated:1")
            async with LLMClient(config) as judge:
                intent = tasks[1001].intent
                good = await fuzzy_match(judge, "$34.50", "The planter costs $34.50", intent)
                bad = await fuzzy_match(judge, "$34.50", "It costs $30", intent)
                same = await ua_match(judge, "no such product", "N/A: the shop has no such product", intent)
                other = await ua_match(judge, "no such product", "$12", intent)
                reply = await judge.complete([ChatMessage(role="user", content="Hi")])
        return good, bad, same, other, reply.text

    good, bad, same, other, unknown = asyncio.run(main())
    # The evaluation's judges never err: E is the planner's models' error rate, not the measurement's.
    assert (good, bad, same, other) == (1.0, 0.0, 1.0, 0.0)
    assert "no task" in unknown
    assert Counter(engine.uses()) == Counter({"fuzzy_judge": 2, "ua_judge": 2})


def test_the_task_is_the_prompts_own_even_when_retrieved_examples_quote_a_longer_one(
        tasks: dict[int, TaskConfig]) -> None:
    engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=0.0))
    task, page = tasks[3034], page_text("tracker_dashboard")
    other = max(tasks.values(), key=lambda t: len(t.intent))
    assert len(other.intent) > len(task.intent)
    examples = f"Steps that worked on similar tasks before:\n1. Task: {other.intent}\n   Action: click [3]"
    messages = build_cot_messages(f"{task.intent}\n{examples}", page, parse_page(page).url, None)
    assert action_of(answer(engine, prompt(messages))[0]) == Click(27)  # Explore: the star task's first step


def test_a_typed_secret_shown_masked_is_still_the_reference_step() -> None:
    card = Type(1163, "4242 4242 4242 4242", press_enter=False)
    assert same_action(Type(1163, "••••••", press_enter=False), card)
    assert not same_action(Type(1164, "••••••", press_enter=False), card)
    assert not same_action(Type(1163, "4000 0000 0000 0002", press_enter=False), card)


def test_draws_do_not_depend_on_element_ids_or_the_sites_ports(tasks: dict[int, TaskConfig]) -> None:
    page = page_text("tracker_dashboard")  # short enough not to be cut: longer ids would move the cut
    moved = re.sub(r"\[(\d+)\]", lambda m: f"[{int(m.group(1)) + 1000}]", page).replace("127.0.0.1:", "127.0.0.1:1")

    def labels(text: str) -> list[str]:
        engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=0.5, seed=3))
        replies = answer(engine, policy_prompt(tasks[3034], text, greedy=True), n=40)
        return ["random" if "random action" in r else "reference" for r in replies]

    assert labels(page) == labels(moved) and "random" in labels(page) and "reference" in labels(page)


def test_stopping_before_a_page_task_is_done_is_judged_off_track(tasks: dict[int, TaskConfig]) -> None:
    engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=0.0))
    task, page = tasks[2019], page_text("forum_home")  # "Show me the posts in f/movies sorted by newest first"
    messages = build_value_messages(task.intent, page, "http://x/", [], "N/A")
    assert parse_value(answer(engine, prompt(messages))[0]) == 0.0


def test_an_action_the_page_refused_is_not_taken_as_done(tasks: dict[int, TaskConfig]) -> None:
    page = page_text("tracker_dashboard")
    failed = prompt(build_cot_messages(tasks[3034].intent, page, parse_page(page).url,
                                       "click [27] (it failed: the element is hidden)"))
    assert read_request(failed).last_step is None


# -- WebPilot's agents ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("step", "other"), [("click [27]", "click [3]"),
                                             ("clicked link 'Explore'", "clicked searchbox 'Search GitLab'")])
def test_webpilots_agents_plan_the_reference_steps_and_judge_them_truthfully(
        tasks: dict[int, TaskConfig], step: str, other: str) -> None:
    """The plan is the reference solution, one step a subtask; the Controller calls a subtask complete once its step
    is taken; the Appraiser scores a reference step high and anything else low; the Extractor answers only where the
    solution is complete. A step is read as an action or in words (mcts tells its judges the element, not its id)."""
    engine = SimulatedEngine(list(tasks.values()), SimulatedSpec(error_rate=0.0))
    task, page = tasks[3034], page_text("tracker_dashboard")
    url = parse_page(page).url
    agents = WebPilotPrompts()
    plan = parse_plan(answer(engine, prompt(plan_messages(task.intent, url, page, "", agents)))[0])
    assert task.reference_solution is not None
    assert len(plan) == len(task.reference_solution.steps) + (1 if task.reference_solution.answer else 0)
    first = plan[0]
    assert first.text == "Click the link 'Explore'"
    # The policy takes the step, and the Controller judges the page it led to.
    answer(engine, policy_prompt(task, page, greedy=True))
    after = parse_control(answer(engine, prompt(control_messages(task.intent, first, [step], url, page,
                                                                  agents)))[0])
    later = parse_control(answer(engine, prompt(control_messages(task.intent, plan[2], [step], url, page,
                                                                  agents)))[0])
    assert after is not None and later is not None
    assert (after.complete, later.complete) == (True, False)
    good = parse_appraisal(answer(engine, prompt(appraise_messages(task.intent, first, step, "", url, page,
                                                                   agents)))[0])
    bad = parse_appraisal(answer(engine, prompt(appraise_messages(task.intent, first, other, "", url, page,
                                                                  agents)))[0])
    assert good is not None and bad is not None and good > bad
    extracted = parse_extraction(answer(engine, prompt(extract_messages(task.intent, plan[-1], step, url,
                                                                        page, agents)))[0])
    assert extracted.answer is None  # one step in, not at the end of the solution


def test_a_webpilot_agent_asked_again_after_a_refusal_is_still_read_as_that_agent(tasks: dict[int, TaskConfig]) -> None:
    """mcts asks its Extractor again, in the same conversation, when the answer has a number no page showed."""
    task, page = tasks[3034], page_text("tracker_dashboard")
    asked = extract_messages(task.intent, Subtask("the count", extract=True), "click [27]", parse_page(page).url, page,
                             WebPilotPrompts())
    again = [*asked, ChatMessage(role="assistant", content="Answer: 4242"),
             ChatMessage(role="user", content="no page on the way here shows 4242. Answer again in the same format.")]
    first, second = read_request(prompt(asked)), read_request(prompt(again))
    assert first.kind == second.kind == "extractor" and second.page == first.page
