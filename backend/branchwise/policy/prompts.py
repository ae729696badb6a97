"""The WebArena chain-of-thought prompt: system message, two worked examples, then the current step.

Follows the reasoning agent of WebArena (Zhou et al., appendix): the examples are separate user/assistant turns and
every user turn carries OBSERVATION / URL / OBJECTIVE / PREVIOUS ACTION.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from ..core.tokens import CHARS_PER_TOKEN
from ..llm import ChatMessage, LLMConfig

TRUNCATION_MARKER = "[... observation truncated here: the rest of the page is not shown ...]"
NO_PREVIOUS_ACTION = "None"
# What a policy prompt holds besides the page, in tokens: the system message and two worked examples (~1,000), the
# task and the rephrased task (~200), the history and the retrieved examples (their budgets below, at most 1,000).
PROMPT_FRAME_TOKENS = 2000
# However small the context, the page gets at least this much (the prompt is then cut to fit before it is sent).
MIN_OBSERVATION_TOKENS = 256
# The context the history's and the examples' default budgets are sized for; a smaller one shrinks them in proportion,
# down to the minimums (a 4,096-token local model: 200 and 300 tokens).
REFERENCE_CONTEXT_TOKENS = 8192
MIN_HISTORY_TOKENS = 100
MIN_EXAMPLES_TOKENS = 150


class PromptConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    # WebArena's CoT agent cuts at 1920 tokens for a 4k context; today's models take more, as LM tree search does.
    # The most a page may take; a smaller model context lowers it (`fitted`).
    max_observation_tokens: int = Field(default=3840, ge=1)
    # The most the previous actions (with what each showed) and the retrieved examples may take; the oldest actions and
    # the least similar examples go first. 400 and 600 hold WebOperator's five steps (240-character summaries) and
    # five examples (240-character thoughts) whole.
    max_history_tokens: int = Field(default=400, ge=1)
    max_examples_tokens: int = Field(default=600, ge=1)
    # Token counts are estimated from characters to stay tokenizer-free.
    chars_per_token: int = Field(default=CHARS_PER_TOKEN, ge=1)
    # WebArena points the agent at a homepage listing its sites; in a user's own browser there is usually none.
    homepage_url: str | None = None

    @property
    def history_chars(self) -> int:
        return self.max_history_tokens * self.chars_per_token

    @property
    def examples_chars(self) -> int:
        return self.max_examples_tokens * self.chars_per_token

    def fitted(self, model: LLMConfig) -> PromptConfig:
        """These settings sized to the model's context: the page gets what the context leaves after the prompt's frame
        and the answer; a context smaller than 8,192 tokens shrinks the history's and the examples' budgets with it."""
        room = model.context_tokens - model.max_tokens - PROMPT_FRAME_TOKENS
        share = min(1.0, model.context_tokens / REFERENCE_CONTEXT_TOKENS)
        update = {
            "max_observation_tokens": max(MIN_OBSERVATION_TOKENS, min(self.max_observation_tokens, room)),
            "max_history_tokens": max(min(MIN_HISTORY_TOKENS, self.max_history_tokens),
                                      round(self.max_history_tokens * share)),
            "max_examples_tokens": max(min(MIN_EXAMPLES_TOKENS, self.max_examples_tokens),
                                       round(self.max_examples_tokens * share)),
        }
        changed = {k: v for k, v in update.items() if getattr(self, k) != v}
        return self.model_copy(update=changed) if changed else self


@dataclass(frozen=True)
class Example:
    observation: str
    url: str
    objective: str
    previous_action: str | None
    answer: str


COT_EXAMPLES: tuple[Example, ...] = (
    Example(
        observation=(
            "[1744] link 'HP CB782A#ABA 640 Inkjet Fax Machine (Renewed)'\n"
            "[1749] StaticText '$279.49'\n"
            "[1757] button 'Add to Cart'\n"
            "[1760] button 'Add to Wish List'\n"
            "[1761] button 'Add to Compare'"
        ),
        url="http://onestopmarket.com/office-products/office-electronics.html",
        objective="What is the price of HP Inkjet Fax Machine",
        previous_action=None,
        answer=(
            "Let's think step-by-step. This page shows the HP Inkjet Fax Machine, the product the objective asks "
            "about, and lists its price as $279.49. That answers the objective, so I will stop and give the price "
            "as the answer. In summary, the next action I will perform is ```stop [$279.49]```"
        ),
    ),
    Example(
        observation=(
            "[164] textbox 'Search' focused: True required: False\n"
            "[171] button 'Go'\n"
            "[174] link 'Find directions between two points'\n"
            "[212] heading 'Search Results'\n"
            "[216] button 'Close'"
        ),
        url="http://openstreetmap.org",
        objective="Show me the restaurants near CMU",
        previous_action=None,
        answer=(
            "Let's think step-by-step. This page has a search box with ID [164]. OpenStreetMap's Nominatim search "
            "understands queries of the form \"restaurants near <place>\", so I can type that query and press Enter "
            "to submit it. In summary, the next action I will perform is ```type [164] [restaurants near CMU] [1]```"
        ),
    ),
)


@functools.cache
def _system_template() -> str:
    return (resources.files("branchwise") / "prompts" / "webarena_cot_system.txt").read_text(encoding="utf-8")


def system_prompt(config: PromptConfig) -> str:
    homepage = ""
    if config.homepage_url:
        homepage = (
            f"\nHomepage:\nIf you want to visit other websites, check out the homepage at {config.homepage_url}. "
            "It has a list of websites you can visit.\n"
        )
    return _system_template().replace("{homepage}", homepage).strip()


def observation_chars(model: LLMConfig, config: PromptConfig | None = None) -> int:
    """The characters of page text a policy prompt for `model` has room for."""
    config = config or PromptConfig()
    return config.fitted(model).max_observation_tokens * config.chars_per_token


def truncate_observation(observation: str, config: PromptConfig) -> str:
    """Keep the observation within budget, cutting at a line boundary and saying where it was cut."""
    budget = config.max_observation_tokens * config.chars_per_token
    if len(observation) <= budget:
        return observation
    room = max(0, budget - len(TRUNCATION_MARKER) - 1)
    head = observation[:room]
    line_end = head.rfind("\n")
    # Prefer whole lines, unless that would throw away most of what fits (one huge line).
    if line_end >= room // 2:
        head = head[:line_end]
    return f"{head}\n{TRUNCATION_MARKER}"


def observation_within(observation: str, max_tokens: int) -> str:
    """The page cut to `max_tokens` as the policy's is (the judges' prompts show it so too)."""
    return truncate_observation(observation, PromptConfig(max_observation_tokens=max_tokens)).rstrip()


def newest_lines(lines: Sequence[str], max_chars: int) -> list[str]:
    """The last lines that fit `max_chars` (the last one always, cut if it alone is too long), after a line saying how
    many are left out: a history that keeps its most recent steps."""
    kept = list(lines)
    while len(kept) > 1 and sum(len(line) + 1 for line in kept) > max_chars:
        kept.pop(0)
    if kept and len(kept[0]) > max_chars:
        kept[0] = kept[0][: max(max_chars - 1, 0)] + "…"
    left_out = len(lines) - len(kept)
    if left_out > 0:
        kept.insert(0, f"({left_out} earlier action{'s' if left_out > 1 else ''} not shown)")
    return kept


def format_user_turn(objective: str, observation: str, url: str, previous_action: str | None,
                     unavailable: Sequence[str] = ()) -> str:
    """WebArena's user turn; `unavailable`: the actions this page does not allow (after the page, so the prompt's start
    stays the same from state to state and a server's prompt cache keeps it)."""
    not_here = f"NOT POSSIBLE HERE: {'; '.join(unavailable)}\n" if unavailable else ""
    return (
        f"OBSERVATION:\n{observation.rstrip()}\n"
        f"URL: {url}\n"
        f"{not_here}"
        f"OBJECTIVE: {objective}\n"
        f"PREVIOUS ACTION: {previous_action or NO_PREVIOUS_ACTION}"
    )


def build_cot_messages(
    objective: str,
    observation: str,
    url: str,
    previous_action: str | None,
    *,
    config: PromptConfig | None = None,
    unavailable: Sequence[str] = (),
) -> list[ChatMessage]:
    """System message, the two example exchanges, then the current step's user turn (`unavailable`: what this page
    does not allow, `validate.unavailable_actions`)."""
    config = config or PromptConfig()
    messages = [ChatMessage(role="system", content=system_prompt(config))]
    for example in COT_EXAMPLES:
        turn = format_user_turn(example.objective, example.observation, example.url, example.previous_action)
        messages.append(ChatMessage(role="user", content=turn))
        messages.append(ChatMessage(role="assistant", content=example.answer))
    observed = truncate_observation(observation, config)
    messages.append(ChatMessage(role="user", content=format_user_turn(objective, observed, url, previous_action,
                                                                      unavailable)))
    return messages
