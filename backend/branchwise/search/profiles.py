"""Named run settings: what a run may spend on its model and how widely each strategy searches.

`laptop`, the default, is sized for a small model on a laptop's CPU, where one call takes tens of seconds: fewer
samples and branches than the papers, and limits that end a run within half an hour. `paper` runs every strategy as
its paper did (best-first: 20 samples, branching 5, 20 states per round; WebOperator: 3 generators, frontier 4;
WebPilot: 10 nodes per subtask, 3 branches, the one-step simulation) with no limits, for strong hosted models and for
comparing with the papers' figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from ..core.budget import Limits
from ..core.status import BacktrackMode
from .action_aware import ActionAwareConfig
from .agent import SearchConfig
from .best_first import BestFirstConfig
from .mcts import MctsConfig
from .reward import RewardConfig
from .value import ValueConfig


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    limits: Limits
    # A strategy's settings by its name; a strategy not named runs with its own defaults (the paper's).
    options: dict[str, BaseModel] = field(default_factory=dict)


PROFILES: dict[str, Profile] = {
    "laptop": Profile(
        "laptop", "sized for a small local model: fewer samples, at most 150 model calls, 600,000 tokens, 30 minutes",
        Limits(max_model_calls=150, max_tokens=600_000, timeout_s=1800.0),
        # Value samples 5, not 20: in the real-model pilot (Qwen2.5-Coder-1.5B, CPU) 87 % of best_first's calls were
        # value samples and a task took 10 minutes.
        {"best_first": BestFirstConfig(candidates=5, branching=3, budget=10, max_depth=4, value=ValueConfig(n=5)),
         "action_aware": ActionAwareConfig(reward=RewardConfig(n_fallback=3)),
         # ~4 calls per node: 5 nodes and 2 branches per subtask, and no look-ahead (3 more calls per node).
         "mcts": MctsConfig(max_nodes=5, branches=2, simulate=False)},
    ),
    "paper": Profile("paper", "each strategy as its paper ran it, without limits", Limits()),
}
DEFAULT_PROFILE = "laptop"


def search_config(strategy: str, *, profile: str = DEFAULT_PROFILE, backtrack: BacktrackMode = "speculative",
                  max_steps: int | None = None, limits: Limits | None = None, examples: bool = False,
                  site: str | None = None, past_runs: bool = True, temperature: float | None = None,
                  keep_prompts: bool = False) -> SearchConfig:
    """How a run searches: `strategy` with the profile's settings for it, and the profile's limits with any of
    `limits` (the user's flags) put over them; `examples`: retrieved steps in every prompt, demonstrations drawn from
    `site` (None: the start page's host), finished runs too unless `past_runs` is off; `temperature`: the policy's,
    over the strategy's own; `keep_prompts`: every model call stored with its prompt."""
    chosen = PROFILES[profile]
    merged = chosen.limits.model_copy(update=limits.model_dump(exclude_none=True) if limits is not None else {})
    return SearchConfig(strategy=strategy, backtrack=backtrack, profile=profile, max_steps=max_steps,
                        options=chosen.options.get(strategy), limits=merged, examples=examples, site=site,
                        past_runs=past_runs, temperature=temperature, keep_prompts=keep_prompts)
