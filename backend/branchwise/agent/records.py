"""What a run produced, step by step: shown live, printed at the end and written with `--json`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from ..llm import Usage


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate of a text's size in tokens (characters / 4)."""
    return max(1, len(text) // 4) if text else 0


class StepRecord(BaseModel):
    index: int
    url: str
    observation_chars: int
    observation_tokens: int
    thought: str = ""
    action: str = ""
    error: str = ""


class UsageRecord(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @classmethod
    def of(cls, usage: Usage) -> UsageRecord:
        return cls(calls=usage.calls, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens)


RunStatus = Literal["finished", "failed", "stopped"]


class RunResult(BaseModel):
    run_id: str
    task: str
    status: RunStatus
    answer: str = ""
    reason: str = ""
    model: str = ""
    scripted_model: bool = False
    steps: list[StepRecord] = []
    usage: UsageRecord = UsageRecord()
