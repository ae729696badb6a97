"""Candidate actions proposed at one node, and the two ways of collapsing several proposals into fewer branches.

WebOperator merges equivalent actions and sums their scores, so that agreement between generators raises an action's
priority instead of spending frontier slots on copies. Koh et al. sample many actions and branch on the most frequent.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import unicodedata
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from ..actions import Action, Stop, Type

log = logging.getLogger(__name__)

_WHITESPACE = re.compile(r"\s+")
# Quotes are stripped from both ends: models often wrap the text to type in them. Trailing sentence punctuation is
# stripped too ("Blue shirt." = "Blue shirt"). Leading punctuation is kept: "-5", "#123" and "@user" mean something.
_QUOTES = "\"'`“”‘’«»„‚"
_TRAILING = ".,;:!?。，"


@dataclass(frozen=True)
class Candidate:
    """One proposed action. `count` is how many proposals it stands for, `score` their summed score (reward), and
    `sources` which generators (prompt variations, samples) proposed it."""

    action: Action
    action_text: str
    thought: str
    count: int = 1
    score: float = 0.0
    sources: tuple[str, ...] = ()


def normalize_fill_text(text: str) -> str:
    """The text of a `type` action as compared for merging: NFKC, case-folded, whitespace collapsed, surrounding quotes
    and trailing sentence punctuation removed. Two fills that differ only in these ways type the same thing for the
    purposes of search (the page's own matching is almost always case- and space-insensitive)."""
    folded = _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    previous = None
    while previous != folded:
        previous = folded
        folded = folded.strip(_QUOTES).rstrip(_TRAILING).strip()
    return folded


def _merge_key(action: Action) -> Hashable:
    """Actions with equal keys are equivalent (WebOperator App. A.2.6): stops with the same normalised answer; fills of
    the same element with the same normalised text and the same press_enter; otherwise only identical actions.

    WebOperator merges all stops into one before scoring, which keeps the most frequent answer and counts generators
    that disagree on the answer as agreeing to stop. Here stops with different answers stay apart until they are
    scored; `best_stop` then keeps one."""
    if isinstance(action, Stop):
        return ("stop", normalize_fill_text(action.answer))
    if isinstance(action, Type):
        return ("type", action.element_id, normalize_fill_text(action.text), action.press_enter)
    return action


def _representative(group: Sequence[Candidate]) -> Candidate:
    """The member whose action, text and thought the merged candidate keeps: the highest score, then the most common
    action within the group (e.g. the answer most stops agree on), then the first to appear."""
    frequency: dict[Action, int] = {}
    for member in group:
        frequency[member.action] = frequency.get(member.action, 0) + member.count
    best = min(range(len(group)), key=lambda i: (-group[i].score, -frequency[group[i].action], i))
    return group[best]


def _combine(group: Sequence[Candidate], representative: Candidate) -> Candidate:
    return dataclasses.replace(
        representative,
        count=sum(member.count for member in group),
        score=sum(member.score for member in group),
        sources=tuple(source for member in group for source in member.sources),
    )


def _groups(candidates: Sequence[Candidate], key: Callable[[Candidate], Hashable]) -> list[list[Candidate]]:
    """Candidates grouped by `key`, groups in order of first appearance."""
    groups: dict[Hashable, list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault(key(candidate), []).append(candidate)
    return list(groups.values())


def merge_candidates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """WebOperator's action merging: one candidate per equivalence class, with counts, scores and sources summed.

    Summing makes an action proposed by two generators outrank one proposed once with a slightly higher score, which is
    the point: agreement is evidence. Output order is the order of first appearance.
    """
    merged = [_combine(group, _representative(group)) for group in _groups(candidates, lambda c: _merge_key(c.action))]
    if len(merged) < len(candidates):
        log.debug("merge_candidates: %d candidates -> %d", len(candidates), len(merged))
    return merged


def best_stop(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Only one answer can be given: of the scored stops, keep the highest-scored (then the one most generators agree
    on, then the first); other candidates pass unchanged, in order."""
    stops = [i for i, c in enumerate(candidates) if isinstance(c.action, Stop)]
    if len(stops) <= 1:
        return list(candidates)
    keep = min(stops, key=lambda i: (-candidates[i].score, -candidates[i].count, i))
    return [c for i, c in enumerate(candidates) if i == keep or not isinstance(c.action, Stop)]


def top_by_count(actions: Sequence[Candidate], b: int) -> list[tuple[Candidate, float]]:
    """Koh et al.'s branching: count identical actions among the samples and keep the b most frequent.

    Each result carries its share of all samples (count / total), which the paper uses as the action's probability.
    Ties on count go to the action that appeared first. Only identical actions are counted together; the first
    sample of each keeps its text and thought, with counts, scores and sources summed.
    """
    if b <= 0 or not actions:
        return []
    total = sum(candidate.count for candidate in actions)
    groups = _groups(actions, lambda c: c.action)
    counted = [_combine(group, group[0]) for group in groups]
    ranked = sorted(range(len(counted)), key=lambda i: (-counted[i].count, i))[:b]
    return [(counted[i], counted[i].count / total if total else 0.0) for i in ranked]
