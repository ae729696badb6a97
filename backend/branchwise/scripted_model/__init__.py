"""An OpenAI-compatible model server that answers from a script keyed on the prompt.

Used as the LLM in tests and in the demo when no real model is configured. It speaks real HTTP so the agent's own
client code is exercised end to end.
"""

from .config import ServerConfig
from .engine import Prompt, PromptMessage, ReplyEngine, Selection
from .recording import RecordedMessage, RecordedRequest
from .script import DEFAULT_FALLBACK, Reply, Rule, Script, TokenLogprob, TopLogprob
from .server import ScriptedModelServer
from .wire import approx_tokens

__all__ = [
    "DEFAULT_FALLBACK",
    "Prompt",
    "PromptMessage",
    "RecordedMessage",
    "RecordedRequest",
    "Reply",
    "ReplyEngine",
    "Rule",
    "Script",
    "ScriptedModelServer",
    "Selection",
    "ServerConfig",
    "TokenLogprob",
    "TopLogprob",
    "approx_tokens",
]
