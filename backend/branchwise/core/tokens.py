"""The one tokenizer-free estimate of a text's size in tokens: characters / 4. Used wherever no server counts for us
(a server's own tokenizer wins where it has one, llm.LLMClient.count_tokens)."""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def approx_tokens(text: str) -> int:
    """At least one token for any non-empty text."""
    return max(1, len(text) // CHARS_PER_TOKEN) if text else 0
