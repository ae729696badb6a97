"""WebPilot's agents' prompts and readers (search/webpilot.py) on answers small models really give."""

from __future__ import annotations

import os

from branchwise.chat_model import INSTRUCTIONS_MARK
from branchwise.search.webpilot import (
    PLAN_FAILED,
    Control,
    Extraction,
    Subtask,
    WebPilotPrompts,
    appraise_messages,
    control_messages,
    explorer_objective,
    parse_appraisal,
    parse_control,
    parse_extraction,
    parse_plan,
    parse_reflection,
    plan_messages,
    refine_feedback,
    reflect_messages,
    unread_control,
)


def test_a_plan_is_read_one_subtask_a_line_and_extract_subtasks_are_marked() -> None:
    plan = parse_plan("Here is the plan.\nSubtask 1: Open the Books category\n**Subtask 2:** Extract: the price of "
                      "the first book\nThis should work.")
    assert plan == [Subtask("Open the Books category"), Subtask("the price of the first book", extract=True)]


def test_a_plan_run_together_on_one_line_is_still_two_subtasks() -> None:
    plan = parse_plan("Subtask 1: Search for the planter Subtask 2: Extract: its price")
    assert plan == [Subtask("Search for the planter"), Subtask("its price", extract=True)]


def test_a_numbered_list_is_a_plan_and_prose_is_not() -> None:
    assert parse_plan("1. Open Books\n2. (extract) read the year") == [Subtask("Open Books"),
                                                                       Subtask("read the year", extract=True)]
    assert parse_plan("I would look around the site first.") == []


def test_appraisal_scores_are_read_through_markdown_and_out_of_ten() -> None:
    assert parse_appraisal("Reasoning...\n**Effectiveness:** 7/10\n- Future promise: 8.5") == (7.0, 8.5)
    assert parse_appraisal("Effectiveness: 12\nFuture promise: 3") == (10.0, 3.0)
    assert parse_appraisal("Effectiveness: high\nFuture promise: 3") is None
    assert parse_appraisal("Effectiveness: 4") is None


def test_the_controllers_last_verdict_counts_with_its_reflection() -> None:
    text = "The format is Complete: yes or no.\nComplete: no\nReflection: the sort was chosen but never applied"
    assert parse_control(text) == Control(False, "the sort was chosen but never applied")
    assert parse_control("**Complete**: Yes") == Control(True, "")
    assert parse_control("It looks finished.") is None


def test_a_verdict_that_cannot_be_read_is_not_complete_and_keeps_its_reflection() -> None:
    text = 'Reflection: The current subtask is not complete. To complete it, click the "Issues 10" link.'
    assert parse_control(text) is None
    assert unread_control(text) == Control(False, 'The current subtask is not complete. To complete it, click the '
                                                  '"Issues 10" link.')
    assert unread_control("It looks finished.") == Control(False, "")


def test_the_extractor_answers_scrolls_or_says_it_is_not_there() -> None:
    assert parse_extraction("The price is shown.\nAnswer: $12.99").answer == "$12.99"
    assert parse_extraction("Answer: N/A (not on this page)").answer is None
    scrolled = parse_extraction("The list continues below.\nScroll: down")
    assert (scrolled.answer, scrolled.scroll) == (None, "down")
    assert parse_extraction("Answer: N/A\nScroll: sideways").scroll is None
    # An answer is not lost to a scroll written beside it; N/A beside a scroll is a scroll.
    assert parse_extraction("Answer: 10\n\nScroll: down") == Extraction("10")
    assert parse_extraction("Answer: N/A\nScroll: down") == Extraction(None, "down")


def test_a_reflection_without_its_lines_is_taken_whole_as_the_effect() -> None:
    reflection = parse_reflection("Effect: the Books page opened\nChild reflection: open the book\n"
                                  "Sibling reflection: searching would be quicker")
    assert (reflection.effect, reflection.child, reflection.sibling) == (
        "the Books page opened", "open the book", "searching would be quicker")
    assert parse_reflection("The page changed to   the list.").effect == "The page changed to the list."


def test_the_explorer_objective_starts_with_the_task_and_names_the_subtask_reflections_and_tried_actions() -> None:
    objective = explorer_objective("When was it published?", Subtask("Open Books"), ["", "About has no books"],
                                   ["click [2]"])
    lines = objective.splitlines()
    assert lines[0] == "When was it published?"
    assert "Current subtask: Open Books" in lines
    assert "Reflection: About has no books" in lines and "Reflection: " not in lines
    assert lines[-1].endswith("click [2]")
    assert "did not work" not in objective
    refused = explorer_objective("When was it published?", Subtask("Open Books"), [], ["click [2]"],
                                 "`type [2] [x] [1]`: [2] is a link, not a text box")
    assert ("Your last answer here did not work: `type [2] [x] [1]`: [2] is a link, not a text box. Give a "
            "different one.") in refused.splitlines()


def test_the_planner_is_told_what_failed_and_why_when_it_refines_the_plan() -> None:
    feedback = refine_feedback(["Open Books"], Subtask("Sort by price"), "the sort control is not on this page",
                               [Subtask("the first price", extract=True)])
    user = plan_messages("Cheapest book?", "https://x/", "[1] link 'Home'", feedback, WebPilotPrompts())[1].content
    assert "Subtask that failed: Sort by price" in user
    assert "the sort control is not on this page" in user
    assert "Extract: the first price" in user
    first = plan_messages("Cheapest book?", "https://x/", "[1] link 'Home'", "", WebPilotPrompts())[1].content
    assert PLAN_FAILED not in first
    # Its last words name the user's task: the examples' tasks come after the page, closer to the end.
    assert first.endswith(": Cheapest book?") and user.endswith(": Cheapest book?")


def test_agent_prompts_cut_long_pages_and_number_the_actions() -> None:
    config = WebPilotPrompts(max_observation_tokens=50)
    messages = control_messages("t", Subtask("s"), ["click [1]", "type [2] [x]"], "https://x/", "line\n" * 500,
                                config)
    user = messages[1].content
    assert "1. click [1]\n2. type [2] [x]" in user
    assert user.count("line") < 60


def test_a_subtask_keeps_the_quote_it_ends_with() -> None:
    plan = parse_plan("Subtask 1: Click the link 'Explore'\nSubtask 2: Type 'x' into the searchbox 'Filter'")
    assert [s.text for s in plan] == ["Click the link 'Explore'", "Type 'x' into the searchbox 'Filter'"]


def test_readers_take_what_small_models_write_around_the_labels() -> None:
    plan = parse_plan("Subtask 1: Open A\nSubtask 2: Use the result of subtask 1. Then sort it\n"
                      "Subtask 3 (Extract): the total")
    assert plan == [Subtask("Open A"), Subtask("Use the result of subtask 1. Then sort it"),
                    Subtask("the total", extract=True)]
    assert parse_appraisal("1. Effectiveness: 7\n2. Future promise: 8") == (7.0, 8.0)
    assert parse_appraisal("Effectiveness: 10/10 Future promise: 9/10") == (10.0, 9.0)
    assert parse_extraction('**Answer:** "Nancy"').answer == "Nancy"
    assert parse_extraction("Answer: None of the orders are pending").answer == "None of the orders are pending"
    assert parse_extraction("Answer: None").answer is None


def test_the_look_back_says_whether_the_address_changed() -> None:
    def asked(before: str, after: str) -> str:
        return reflect_messages("Open issues?", Subtask("Open the project"), "click [324]", "", before, after,
                                "[324] heading 'Design Tokens'", WebPilotPrompts())[1].content

    assert "Page before: http://a/ (the address did not change)" in asked("http://a/", "http://a/")
    assert "Page before: http://a/\n" in asked("http://a/", "http://a/project")
    assert "Page before: http://a/\n" not in asked("http://a/", "http://a/#reviews"), "an anchor is the same page"


def test_the_agents_judging_one_page_send_the_same_prompt_up_to_their_own_part() -> None:
    """The reflection, the Appraiser and the Controller judge the page an action reached one after another: their
    prompts are the same up to the agent's part after the page, so a prompt cache reads the page once."""
    page = "\n".join(f"[{i}] link 'Product {i}'" for i in range(300))
    task, url, sub, config = "Cheapest planter?", "http://shop/category/3", Subtask("Open Garden"), WebPilotPrompts()
    prompts = [reflect_messages(task, sub, "click [7]", "open Garden", "http://shop/", url, page, config),
               appraise_messages(task, sub, "click [7]", "Garden opened", url, page, config),
               control_messages(task, sub, ["click [7]"], url, page, config)]
    assert len({p[0].content for p in prompts}) == 1
    users = [p[1].content for p in prompts]
    shared = os.path.commonprefix(users)
    assert page + "\n" + INSTRUCTIONS_MARK in shared
    assert all(len(shared) > 0.8 * len(user) for user in users)
    head = len(shared) - len("You are the ")
    assert [u[head:].splitlines()[0] for u in users] == [
        "You are the Explorer of a web agent, looking back at the action it just took. The page above is the page "
        "after it.", "You are the Appraiser of a web agent. You score the action it just took for the current "
        "subtask; the page above is", "You are the Controller of a web agent. You judge whether the current subtask "
        "is complete, from the actions taken for"]
