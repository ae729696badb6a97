"""Retrieved past examples for one of the prompt variations (WebOperator's third context variation).

The pool is the chosen path of every finished run in the run store: (goal, page, thought, action) per step. A step is
retrieved by how much its goal and its page resemble the current task and page; WebOperator embeds the two with
all-MiniLM-L6-v2, which needs model weights this machine cannot download, so similarity here is TF-IDF cosine over
words — cheap, deterministic and good at what matters on one site: the same words in the task and on the page.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..store import RunStore, TrajectoryStep

log = logging.getLogger(__name__)

WORD = re.compile(r"[^\W\d_]{2,}")
# Long pages say most of what they are in their first few thousand characters; indexing all of it costs time only.
OBSERVATION_CHARS = 4000
THOUGHT_CHARS = 240


class RetrievalConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    k: int = Field(default=5, ge=0, description="Past steps shown to the retrieval variation (WebOperator: 5)")
    runs: int = Field(default=100, ge=1, description="How many of the newest finished runs form the pool")
    goal_weight: float = Field(default=0.5, ge=0.0, le=1.0, description="The rest of the score is page similarity")


@dataclass(frozen=True)
class Example:
    goal: str
    url: str
    thought: str
    action: str
    score: float


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


class _Vectors:
    """TF-IDF vectors of a fixed set of documents, and the same weighting for a query."""

    def __init__(self, documents: Sequence[list[str]]) -> None:
        counts = [Counter(doc) for doc in documents]
        frequency = Counter(word for count in counts for word in count)
        total = len(documents)
        self.idf = {word: math.log((1 + total) / (1 + df)) + 1.0 for word, df in frequency.items()}
        self.vectors = [self._weigh(count) for count in counts]

    def _weigh(self, count: Counter[str]) -> dict[str, float]:
        vector = {word: (1 + math.log(n)) * self.idf.get(word, 0.0) for word, n in count.items()}
        norm = math.sqrt(sum(v * v for v in vector.values()))
        return {word: v / norm for word, v in vector.items()} if norm else {}

    def similarities(self, query: list[str]) -> list[float]:
        q = self._weigh(Counter(query))
        return [sum(weight * vector.get(word, 0.0) for word, weight in q.items()) for vector in self.vectors]


class ExampleIndex:
    def __init__(self, steps: Iterable[TrajectoryStep], config: RetrievalConfig | None = None) -> None:
        self.config = config or RetrievalConfig()
        steps = [s for s in steps if s.action_text]
        self.runs = len({s.run_id for s in steps})
        # The same step of the same task is one example, however many runs took it.
        unique: dict[tuple[str, str, str], TrajectoryStep] = {}
        for s in steps:
            unique.setdefault((s.task, s.action_text, s.url), s)
        self.steps = list(unique.values())
        self._goals = _Vectors([words(s.task) for s in self.steps])
        self._pages = _Vectors([words(s.observation_text[:OBSERVATION_CHARS]) for s in self.steps])

    def __len__(self) -> int:
        return len(self.steps)

    def top(self, goal: str, observation: str) -> list[Example]:
        """The k most similar past steps, best first; steps sharing nothing with the query are never shown."""
        if not self.steps or self.config.k == 0:
            return []
        w = self.config.goal_weight
        goal_sim = self._goals.similarities(words(goal))
        page_sim = self._pages.similarities(words(observation[:OBSERVATION_CHARS]))
        scored = sorted(((w * g + (1 - w) * p, i) for i, (g, p) in enumerate(zip(goal_sim, page_sim, strict=True))),
                        key=lambda pair: (-pair[0], pair[1]))
        return [Example(self.steps[i].task, self.steps[i].url, _clip(self.steps[i].thought), self.steps[i].action_text,
                        round(score, 4))
                for score, i in scored[: self.config.k] if score > 0]


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= THOUGHT_CHARS else text[: THOUGHT_CHARS - 1] + "…"


def examples_block(examples: Sequence[Example]) -> str:
    """The examples as the prompt shows them, after the task; empty when there are none."""
    if not examples:
        return ""
    lines = ["Steps that worked on similar tasks before (their element ids belong to other pages; use the ids of "
             "this page):"]
    for i, example in enumerate(examples, start=1):
        lines.append(f"{i}. Task: {example.goal}\n   Page: {example.url}\n   Thought: {example.thought}\n"
                     f"   Action: {example.action}")
    return "\n".join(lines)


def fit_examples(block: str, max_chars: int) -> str:
    """The block with its last (least similar) examples left out until it fits `max_chars`; empty when not even the
    first fits."""
    heading, *examples = re.split(r"\n(?=\d+\. Task: )", block)
    while examples and len(heading) + sum(len(e) + 1 for e in examples) > max_chars:
        examples.pop()
    return "\n".join([heading, *examples]) if examples else ""


async def load_examples(store: RunStore, config: RetrievalConfig, exclude_run: str) -> ExampleIndex | None:
    """The pool from the store's finished runs, built off the event loop; None when retrieval is off or the store
    cannot be read (a run without examples is still a run)."""
    if config.k == 0:
        return None

    def build() -> ExampleIndex:
        return ExampleIndex(store.finished_trajectories(config.runs, exclude_run=exclude_run), config)

    try:
        return await asyncio.to_thread(build)
    except Exception:  # a broken store must not stop the user's task
        log.exception("could not read past runs for retrieval")
        return None
