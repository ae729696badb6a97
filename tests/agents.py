"""The greedy strategy run as an agent, for tests that only need one model and no browser to backtrack in."""

from __future__ import annotations

from typing import Any

from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.greedy import GreedyConfig
from branchwise.search.roles import Completer, ModelRoles


def greedy_agent(model: Completer, browser: Any = None, **kwargs: Any) -> SearchAgent:
    """`kwargs`: GreedyConfig fields, the agent's own (store, gate, approver, classifier) and `keep_prompts`."""
    agent_keys = ("store", "gate", "approver", "classifier")
    keep_prompts = bool(kwargs.pop("keep_prompts", False))
    options = GreedyConfig.model_validate({k: v for k, v in kwargs.items() if k not in agent_keys})
    return SearchAgent(ModelRoles.shared(model), browser,
                       SearchConfig(strategy="greedy", options=options, keep_prompts=keep_prompts),
                       **{k: v for k, v in kwargs.items() if k in agent_keys})
