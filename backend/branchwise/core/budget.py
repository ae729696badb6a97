"""What a run may spend on its model: calls, tokens and wall time, and how much of it is left.

Every model call of a run reserves its worst case first (its prompt as counted, plus the longest answer it may get,
times the samples asked for), so a run never goes over a limit, even with calls in flight at once; the reservation is
replaced by what the call really used when it returns. Search asks `scaled(n)` how many samples it can still afford:
all of them until half of the tightest limit is spent, then fewer, down to one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from .usage import Usage

# Up to this share of the tightest limit, search samples as configured; from there it thins out to one sample at
# FULL_BEFORE_END.
EASE_OFF_AT = 0.5
FULL_BEFORE_END = 0.9


class Limits(BaseModel):
    """A run's limits; None: no limit of that kind."""

    model_config = ConfigDict(frozen=True)
    max_model_calls: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout_s: float | None = Field(default=None, gt=0)

    def describe(self) -> str:
        parts = [f"{self.max_model_calls} model calls" if self.max_model_calls else "",
                 f"{self.max_tokens:,} tokens" if self.max_tokens else "",
                 f"{_duration(self.timeout_s)}" if self.timeout_s else ""]
        return ", ".join(p for p in parts if p) or "no limits"


class BudgetExhausted(RuntimeError):
    """A model call would take the run over one of its limits; `str()` says which."""


@dataclass(frozen=True)
class Reservation:
    calls: int
    tokens: int


class RunBudget:
    """One run's spending against its Limits. Single event loop: reserve and settle are not awaited in between."""

    def __init__(self, limits: Limits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits or Limits()
        self._clock = clock
        self._started = clock()
        self.used = Usage()
        self._held_calls = 0
        self._held_tokens = 0

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._started

    def reserve(self, calls: int, tokens: int) -> Reservation:
        """Hold `calls` calls and up to `tokens` tokens for a call about to be made; BudgetExhausted if they would
        take the run over a limit, or its time is up."""
        limits = self.limits
        if limits.timeout_s is not None and self.elapsed_s >= limits.timeout_s:
            raise BudgetExhausted(f"the run's time limit ({_duration(limits.timeout_s)}) is reached")
        if limits.max_model_calls is not None and self.used.calls + self._held_calls + calls > limits.max_model_calls:
            raise BudgetExhausted(f"the run's {limits.max_model_calls} model calls are spent")
        if limits.max_tokens is not None and self.used.total_tokens + self._held_tokens + tokens > limits.max_tokens:
            raise BudgetExhausted(f"the run's {limits.max_tokens:,} tokens would be exceeded by the next model call "
                                  f"({self.used.total_tokens:,} used)")
        self._held_calls += calls
        self._held_tokens += tokens
        return Reservation(calls, tokens)

    def settle(self, reservation: Reservation, usage: Usage | None) -> None:
        """The call behind `reservation` returned having used `usage` (None: it failed, nothing to charge)."""
        self._held_calls -= reservation.calls
        self._held_tokens -= reservation.tokens
        if usage is not None:
            self.used = self.used + usage

    def pressure(self) -> float:
        """The spent share of the tightest limit, 0 to 1 (0 when there are none)."""
        limits, shares = self.limits, [0.0]
        if limits.max_model_calls is not None:
            shares.append(self.used.calls / limits.max_model_calls)
        if limits.max_tokens is not None:
            shares.append(self.used.total_tokens / limits.max_tokens)
        if limits.timeout_s is not None:
            shares.append(self.elapsed_s / limits.timeout_s)
        return min(1.0, max(shares))

    def scaled(self, count: int) -> int:
        """How many of `count` samples (candidates, branches, generators) to ask for now: all until EASE_OFF_AT of
        the tightest limit is spent, then linearly fewer, one from FULL_BEFORE_END on."""
        share = self.pressure()
        if count <= 1 or share <= EASE_OFF_AT:
            return count
        left = max(0.0, FULL_BEFORE_END - share) / (FULL_BEFORE_END - EASE_OFF_AT)
        return max(1, round(count * left))

    def describe(self) -> str:
        """The progress line's budget part: what is used of each limit."""
        limits, used = self.limits, self.used
        parts = [f"{used.calls}" + (f"/{limits.max_model_calls}" if limits.max_model_calls else "") + " calls",
                 f"{used.total_tokens:,}" + (f"/{limits.max_tokens:,}" if limits.max_tokens else "") + " tokens",
                 _duration(self.elapsed_s) + (f"/{_duration(limits.timeout_s)}" if limits.timeout_s else "")]
        return ", ".join(parts)


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
