"""The strategy registry: a strategy's name, how it is built and its settings. Adding a strategy is one module with a
class that has `name` and `search(ctx)` and a pydantic config with `max_steps`, plus one line here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from .action_aware import ActionAwareConfig, ActionAwareSearch
from .best_first import BestFirstConfig, BestFirstSearch
from .context import SearchStrategy
from .greedy import GreedyConfig, GreedySearch
from .mcts import MctsConfig, MctsSearch


def _policy_temperature(config: BaseModel, temperature: float) -> BaseModel:
    assert "temperature" in type(config).model_fields, f"{type(config).__name__} has no policy temperature"
    return config.model_copy(update={"temperature": temperature})


def _explorer_temperature(config: BaseModel, temperature: float) -> BaseModel:
    assert isinstance(config, MctsConfig)
    return config.model_copy(update={"explorer_temperature": temperature})


def _generators_temperature(config: BaseModel, temperature: float) -> BaseModel:
    assert isinstance(config, ActionAwareConfig)
    return config.model_copy(update={"generation": config.generation.model_copy(update={"temperature": temperature})})


@dataclass(frozen=True)
class StrategySpec:
    build: Callable[[Any], SearchStrategy]
    config: type[BaseModel]
    summary: str
    # Its settings with the policy sampling its actions at another temperature.
    with_temperature: Callable[[BaseModel, float], BaseModel] = _policy_temperature

    def make(self, options: BaseModel | None = None, *, max_steps: int | None = None,
             temperature: float | None = None) -> SearchStrategy:
        """The strategy with `options` (its defaults if None) and, if given, `max_steps` as its step limit and
        `temperature` as its policy's."""
        config = options if options is not None else self.config()
        if not isinstance(config, self.config):
            raise TypeError(f"expected {self.config.__name__} settings, got {type(config).__name__}")
        if max_steps is not None:
            config = config.model_copy(update={"max_steps": max_steps})
        if temperature is not None:
            config = self.with_temperature(config, temperature)
        return self.build(config)


STRATEGIES: dict[str, StrategySpec] = {
    "greedy": StrategySpec(GreedySearch, GreedyConfig, "one action at a time (WebArena's CoT agent)"),
    "best_first": StrategySpec(BestFirstSearch, BestFirstConfig, "states scored by a value function (Koh et al.)"),
    "action_aware": StrategySpec(ActionAwareSearch, ActionAwareConfig,
                                 "actions scored before they run, safe ones first (WebOperator)",
                                 _generators_temperature),
    "mcts": StrategySpec(MctsSearch, MctsConfig,
                         "a plan of subtasks, each searched by MCTS with reflections (WebPilot)",
                         _explorer_temperature),
}


def strategy_spec(name: str) -> StrategySpec:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}") from None
