"""What a run produced, step by step: shown live, printed at the end and written with `--json`."""

from __future__ import annotations

from pydantic import BaseModel

from ..core.mistakes import MistakeCounts
from ..core.status import ResultStatus
from ..core.usage import Usage


class StepRecord(BaseModel):
    index: int
    url: str
    observation_chars: int
    observation_tokens: int
    thought: str = ""
    action: str = ""
    error: str = ""
    # How long the tab took to settle after the action ran (None: nothing ran in the page), and whether it settled
    # before the cap (False: observed while still busy).
    settle_ms: int | None = None
    settled: bool = True


class RunResult(BaseModel):
    run_id: str
    task: str
    status: ResultStatus
    answer: str = ""
    reason: str = ""
    model: str = ""
    scripted_model: bool = False
    steps: list[StepRecord] = []
    usage: Usage = Usage()
    # The models' mistakes per role and kind (core/mistakes.py).
    mistakes: MistakeCounts = {}
