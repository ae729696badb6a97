"""The greedy strategy run as an agent, for tests that only need one model and no browser to backtrack in."""

from __future__ import annotations

from typing import Any

from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.greedy import GreedyConfig
from branchwise.search.roles import Completer, ModelRoles


def greedy_agent(model: Completer, browser: Any = None, **kwargs: Any) -> SearchAgent:
    """`kwargs`: GreedyConfig fields, and the agent's own (store, gate, approver, classifier)."""
    agent_keys = ("store", "gate", "approver", "classifier")
    options = GreedyConfig.model_validate({k: v for k, v in kwargs.items() if k not in agent_keys})
    return SearchAgent(ModelRoles.shared(model), browser, SearchConfig(strategy="greedy", options=options),
                       **{k: v for k, v in kwargs.items() if k in agent_keys})
