"""Two rows of a report head to head on the tasks both ran. The rows of a benchmark run the same tasks, so what tells
two strategies apart is the tasks one solved and the other did not; the tasks both solved or both failed say nothing
about which is better. Each row's own interval ignores that pairing and is much wider than the difference it can
show: on sixteen tasks, 31 % [14–56 %] beside 25 % [10–49 %]. The exact sign test on the discordant tasks
(McNemar's exact test) says how likely a split at least as uneven is when neither row is better."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

from pydantic import BaseModel


class HeadToHead(BaseModel):
    first: str
    second: str
    # The tasks both rows have a result for, and of them: solved by both, by the first only, by the second only.
    tasks: int
    both: int
    first_only: int
    second_only: int
    # Two-sided, exact: the chance of a split of the discordant tasks at least this uneven if neither row is better.
    p_value: float


def sign_test(first_only: int, second_only: int) -> float:
    """McNemar's exact test: two-sided binomial test of the discordant pairs at one half."""
    n = first_only + second_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(first_only, second_only) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def head_to_head(scores: Mapping[int, Mapping[str, float]], labels: Sequence[str]) -> list[HeadToHead]:
    """Every pair of `labels` (in their order) on the tasks both have a score for; a task is solved at score 1."""
    pairs = []
    for first, second in combinations(labels, 2):
        both_ran = [by for by in scores.values() if first in by and second in by]
        solved = [(by[first] >= 1, by[second] >= 1) for by in both_ran]
        first_only = sum(a and not b for a, b in solved)
        second_only = sum(b and not a for a, b in solved)
        pairs.append(HeadToHead(first=first, second=second, tasks=len(both_ran), both=sum(a and b for a, b in solved),
                                first_only=first_only, second_only=second_only,
                                p_value=sign_test(first_only, second_only)))
    return pairs
