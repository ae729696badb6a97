"""The WebArena chain-of-thought prompt: structure, wording that parsers rely on, and observation truncation."""

from __future__ import annotations

from branchwise.llm import LLMConfig
from branchwise.policy import TRUNCATION_MARKER, ChatMessage, PromptConfig, build_cot_messages
from branchwise.policy.prompts import (
    MIN_OBSERVATION_TOKENS,
    PROMPT_FRAME_TOKENS,
    format_user_turn,
    newest_lines,
    system_prompt,
    truncate_observation,
)

OBSERVATION = "[42] button 'Submit'\n[43] link 'Home'"
ACTIONS = [
    "`click [id]`",
    "`type [id] [content] [press_enter_after=0|1]`",
    "`hover [id]`",
    "`press [key_comb]`",
    "`scroll [direction=down|up]`",
    "`new_tab`",
    "`tab_focus [tab_index]`",
    "`close_tab`",
    "`goto [url]`",
    "`go_back`",
    "`go_forward`",
    "`stop [answer]`",
]


def build(previous_action: str | None = "click [7]", config: PromptConfig | None = None) -> list[ChatMessage]:
    url = "http://example.test/form"
    return build_cot_messages("Submit the form", OBSERVATION, url, previous_action, config=config)


def test_structure_is_system_two_example_pairs_then_the_task() -> None:
    messages = build()
    assert [m.role for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert all(isinstance(m, ChatMessage) for m in messages)


def test_system_message_describes_every_action_and_the_answer_format() -> None:
    system = build()[0].content
    for action in ACTIONS:
        assert action in system
    assert 'In summary, the next action I will perform is ```click [1234]```' in system
    assert '"N/A"' in system
    assert "accessibility tree" in system and "{homepage}" not in system
    assert "Homepage:" not in system


def test_homepage_section_only_when_configured() -> None:
    system = system_prompt(PromptConfig(homepage_url="http://homepage.test"))
    assert "Homepage:\nIf you want to visit other websites, check out the homepage at http://homepage.test." in system
    assert system.index("`stop [answer]`") < system.index("Homepage:") < system.index("To be successful")


def test_examples_follow_the_webarena_format() -> None:
    _, fax_user, fax_answer, osm_user, osm_answer, _ = build()
    assert fax_user.content.startswith("OBSERVATION:\n[1744] link 'HP CB782A#ABA 640 Inkjet Fax Machine (Renewed)'")
    assert "URL: http://onestopmarket.com/office-products/office-electronics.html" in fax_user.content
    assert "OBJECTIVE: What is the price of HP Inkjet Fax Machine" in fax_user.content
    assert fax_user.content.endswith("PREVIOUS ACTION: None")
    assert fax_answer.content.startswith("Let's think step-by-step.")
    assert fax_answer.content.endswith("In summary, the next action I will perform is ```stop [$279.49]```")

    assert "[164] textbox 'Search' focused: True required: False" in osm_user.content
    assert "OBJECTIVE: Show me the restaurants near CMU" in osm_user.content
    assert osm_answer.content.startswith("Let's think step-by-step.")
    assert osm_answer.content.endswith("```type [164] [restaurants near CMU] [1]```")


def test_final_user_turn_carries_observation_url_objective_and_previous_action() -> None:
    assert build()[-1].content == (
        "OBSERVATION:\n[42] button 'Submit'\n[43] link 'Home'\n"
        "URL: http://example.test/form\n"
        "OBJECTIVE: Submit the form\n"
        "PREVIOUS ACTION: click [7]"
    )
    assert build(previous_action=None)[-1].content.endswith("PREVIOUS ACTION: None")


def test_what_the_page_does_not_allow_follows_the_page_so_the_prompts_start_stays_cacheable() -> None:
    turn = build_cot_messages("Submit the form", "[42] button 'Submit'", "http://example.test/form", None,
                              unavailable=["go_back (there is no previous page)", "select_option (no list)"])[-1]
    assert turn.content == (
        "OBSERVATION:\n[42] button 'Submit'\n"
        "URL: http://example.test/form\n"
        "NOT POSSIBLE HERE: go_back (there is no previous page); select_option (no list)\n"
        "OBJECTIVE: Submit the form\n"
        "PREVIOUS ACTION: None"
    )


def test_short_observations_are_kept_whole() -> None:
    assert truncate_observation(OBSERVATION, PromptConfig()) == OBSERVATION
    assert TRUNCATION_MARKER not in build()[-1].content
    assert PromptConfig().max_observation_tokens == 3840


def test_long_observations_are_cut_at_a_line_with_a_marker() -> None:
    config = PromptConfig(max_observation_tokens=100)
    lines = [f"[{i}] link 'Result number {i}'" for i in range(200)]
    cut = truncate_observation("\n".join(lines), config)
    assert cut.endswith("\n" + TRUNCATION_MARKER)
    assert len(cut) <= 100 * 4
    kept = cut.split("\n")[:-1]
    assert kept == lines[: len(kept)] and len(kept) > 5

    final_turn = build_cot_messages("x", "\n".join(lines), "http://u", None, config=config)[-1].content
    assert TRUNCATION_MARKER + "\nURL: http://u" in final_turn


def test_a_single_huge_line_is_cut_mid_line() -> None:
    config = PromptConfig(max_observation_tokens=50, chars_per_token=4)
    cut = truncate_observation("x" * 10_000, config)
    assert cut.startswith("x" * 100) and cut.endswith(TRUNCATION_MARKER) and len(cut) <= 200


def test_user_turn_formatter_matches_the_examples() -> None:
    expected = "OBSERVATION:\nobs\nURL: http://u\nOBJECTIVE: o\nPREVIOUS ACTION: None"
    assert format_user_turn("o", "obs\n", "http://u", None) == expected


def test_the_pages_share_follows_the_models_context() -> None:
    """The page gets what the context leaves after the prompt's frame and the answer, up to the configured cap."""
    config = PromptConfig()
    assert config.fitted(LLMConfig(context_tokens=8192)).max_observation_tokens == 3840
    assert config.fitted(LLMConfig(context_tokens=4096)).max_observation_tokens == 4096 - 384 - PROMPT_FRAME_TOKENS
    assert config.fitted(LLMConfig(context_tokens=1024)).max_observation_tokens == MIN_OBSERVATION_TOKENS
    assert PromptConfig(max_observation_tokens=20_000).fitted(
        LLMConfig(context_tokens=16_384)).max_observation_tokens == 16_384 - 384 - PROMPT_FRAME_TOKENS
    assert PromptConfig(max_observation_tokens=20_000).fitted(
        LLMConfig(context_tokens=32_768)).max_observation_tokens == 20_000


def test_the_history_and_examples_budgets_shrink_with_a_small_context() -> None:
    config = PromptConfig()
    big = config.fitted(LLMConfig(context_tokens=32_768))
    assert (big.max_history_tokens, big.max_examples_tokens) == (400, 600)
    laptop = config.fitted(LLMConfig(context_tokens=4096))
    assert (laptop.max_history_tokens, laptop.max_examples_tokens) == (200, 300)
    tiny = config.fitted(LLMConfig(context_tokens=1024))
    assert (tiny.max_history_tokens, tiny.max_examples_tokens) == (100, 150)
    # The frame they live in is what the page's share leaves room for.
    assert big.max_history_tokens + big.max_examples_tokens <= PROMPT_FRAME_TOKENS - 1000


def test_newest_lines_keep_the_latest_steps_and_say_how_many_are_left_out() -> None:
    lines = [f"{i}. click [{i}] (seen: {'x' * 40})" for i in range(1, 11)]
    kept = newest_lines(lines, 200)
    assert kept[0] == "(7 earlier actions not shown)" and kept[1:] == lines[-3:]
    assert newest_lines(lines, 10_000) == lines
    assert newest_lines(["1. " + "y" * 500], 100) == ["1. " + "y" * 96 + "…"]
