"""Turning an objective and a page observation into model prompts (and, later, model answers into actions)."""

from ..llm import ChatMessage
from .prompts import TRUNCATION_MARKER, PromptConfig, build_cot_messages

__all__ = ["TRUNCATION_MARKER", "ChatMessage", "PromptConfig", "build_cot_messages"]
