"""WebOperator's task rephraser: section parsing, fallbacks and the block handed to the policy prompt."""

from __future__ import annotations

import asyncio

from branchwise.search.rephrase import (
    RephraseConfig,
    Rephrased,
    build_rephrase_messages,
    parse_rephrase,
    rephrase,
)

from fake_models import FakeModel

TASK = "Change my profile bio to 'Plant lover'."

ANSWER = """# REPHRASED TASK:
Replace the bio text on the user's own profile with exactly 'Plant lover'.
# SUBGOALS:
- Open the user's profile settings.
- Put 'Plant lover' in the bio field.
- Save and confirm the profile shows the new bio.
# AMBIGUITIES OR ASSUMPTIONS:
- Which site's profile is meant.
# CAUTIONS:
- Check the saved bio, not just a success message.
"""


def test_parse_reads_all_four_sections() -> None:
    result = parse_rephrase(ANSWER, TASK)
    assert result.parsed
    assert result.original == TASK
    assert result.task == "Replace the bio text on the user's own profile with exactly 'Plant lover'."
    assert result.subgoals == (
        "Open the user's profile settings.",
        "Put 'Plant lover' in the bio field.",
        "Save and confirm the profile shows the new bio.",
    )
    assert result.ambiguities == ("Which site's profile is meant.",)
    assert result.cautions == ("Check the saved bio, not just a success message.",)


def test_parse_tolerates_markdown_inline_text_numbering_and_order() -> None:
    text = (
        "Sure, here it is.\n\n"
        "**Rephrased task:** Set the bio to 'Plant lover'.\n\n"
        "## Cautions\n1. Verify the save.\n\n"
        "**Subgoals**:\n* open settings\n* edit bio\n"
        "Ambiguities and assumptions:\n- none obvious\n"
    )
    result = parse_rephrase(text, TASK)
    assert result.task == "Set the bio to 'Plant lover'."
    assert result.subgoals == ("open settings", "edit bio")
    assert result.cautions == ("Verify the save.",)
    assert result.ambiguities == ("none obvious",)


def test_a_bullet_mentioning_a_section_name_is_not_a_heading() -> None:
    text = "# SUBGOALS:\n- Subgoals: find the page first\n# CAUTIONS:\n- Cautions apply to forms"
    result = parse_rephrase(text, TASK)
    assert result.subgoals == ("Subgoals: find the page first",)
    assert result.cautions == ("Cautions apply to forms",)


def test_unparseable_answer_keeps_the_original_task() -> None:
    result = parse_rephrase("I'm not sure what you mean.", TASK)
    assert result == Rephrased(original=TASK, task=TASK)
    assert not result.parsed
    assert result.as_prompt_block() == ""
    # Sections without a restatement also keep the original as the task.
    partial = parse_rephrase("# SUBGOALS:\n- a", TASK)
    assert (partial.task, partial.subgoals, partial.parsed) == (TASK, ("a",), True)


def test_items_per_section_are_capped() -> None:
    text = "# SUBGOALS:\n" + "\n".join(f"- step {i}" for i in range(20))
    assert len(parse_rephrase(text, TASK, max_items=3).subgoals) == 3


def test_prompt_block_lists_the_non_empty_sections() -> None:
    block = parse_rephrase(ANSWER, TASK).as_prompt_block()
    assert block.startswith("Task restated:\nReplace the bio text")
    assert "Subgoals:\n- Open the user's profile settings.\n- Put 'Plant lover' in the bio field." in block
    assert "Ambiguities and assumptions to check:\n- Which site's profile is meant." in block
    assert block.endswith("Cautions:\n- Check the saved bio, not just a success message.")
    only_subgoals = Rephrased(original=TASK, task=TASK, subgoals=("a",), parsed=True).as_prompt_block()
    assert only_subgoals == "Subgoals:\n- a"


def test_messages_carry_the_task_verbatim() -> None:
    messages = build_rephrase_messages("Find {the} price")
    assert [m.role for m in messages] == ["system", "user"]
    assert "# REPHRASED TASK:" in messages[0].content and "# CAUTIONS:" in messages[0].content
    assert "Find {the} price" in messages[1].content


def test_rephrase_calls_the_model_once() -> None:
    model = FakeModel.always(ANSWER)
    config = RephraseConfig()
    result = asyncio.run(rephrase(model, TASK, config))
    assert result.subgoals[0] == "Open the user's profile settings."
    [call] = model.calls
    assert (call.temperature, call.max_tokens) == (config.temperature, config.max_tokens)
    assert TASK in call.messages[1].content
    assert asyncio.run(rephrase(FakeModel.always(""), TASK)).task == TASK
