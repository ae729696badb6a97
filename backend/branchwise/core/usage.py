"""What model calls cost: one type, summed per role and run, shown at the end of a run and stored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    """Token and call counts; immutable, so a client's running total can be handed out as a snapshot."""

    model_config = ConfigDict(frozen=True)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    # Of the prompt tokens, those the server took from its prompt cache instead of reading them again (OpenAI's and
    # llama.cpp's `prompt_tokens_details.cached_tokens`; 0 where the server does not say).
    cached_prompt_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            retries=self.retries + other.retries,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
        )

    def __sub__(self, earlier: Usage) -> Usage:
        """What was used since `earlier`, a snapshot of the same running total (clients are shared by runs)."""
        return Usage(
            calls=self.calls - earlier.calls,
            prompt_tokens=self.prompt_tokens - earlier.prompt_tokens,
            completion_tokens=self.completion_tokens - earlier.completion_tokens,
            retries=self.retries - earlier.retries,
            cached_prompt_tokens=self.cached_prompt_tokens - earlier.cached_prompt_tokens,
        )
