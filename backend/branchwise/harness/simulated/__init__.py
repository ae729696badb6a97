"""A simulated model for controlled comparisons: it answers from each task's reference solution, making mistakes at a
chosen rate E, over the same OpenAI-compatible HTTP server as the scripted model. It costs no LLM, so how well search
recovers from a policy's mistakes can be measured on the whole suite. Labelled simulated wherever it appears."""

from .engine import MissingReferenceSolution, SimulatedEngine, SimulatedSpec
from .model import open_simulated_model

__all__ = ["MissingReferenceSolution", "SimulatedEngine", "SimulatedSpec", "open_simulated_model"]
