"""Retrieved past examples for the prompts (WebOperator's third context variation; every strategy's with --examples).

The pool is the chosen path of every finished run in the run store and the demonstrations learnt by exploring the
run's site (`branchwise explore`, NNetNav): (goal, page, thought, action) per step. A step is retrieved by how much its
goal and its page resemble the current task and page. WebOperator embeds the two with all-MiniLM-L6-v2; no embedding
library here can load weights offline (fastembed and model2vec download them at first use, the MiniLM package needs
torch), so similarity is BM25 (`bm25s`) over words, each side scaled by its best match so goal and page weigh alike:
deterministic, and good at what matters on one site, the same words in the task and on the page.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import bm25s
from pydantic import BaseModel, ConfigDict, Field

from ..store import DemonstrationRecord, RunStore, TrajectoryStep

log = logging.getLogger(__name__)

WORD = re.compile(r"[^\W\d_]{2,}")
# Long pages say most of what they are in their first few thousand characters; indexing all of it costs time only.
OBSERVATION_CHARS = 4000
THOUGHT_CHARS = 240
# Steps of a demonstration enter the pool under this prefix and the demonstration's id.
DEMO_PREFIX = "demo:"
DEFAULT_PORTS = {"http": 80, "https": 443}


class RetrievalConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    k: int = Field(default=5, ge=0, description="Past steps shown to the retrieval variation (WebOperator: 5)")
    runs: int = Field(default=100, ge=1, description="How many of the newest finished runs form the pool")
    goal_weight: float = Field(default=0.5, ge=0.0, le=1.0, description="The rest of the score is page similarity")
    demos: int = Field(default=200, ge=0, description="How many of the site's newest demonstrations join the pool")


@dataclass(frozen=True)
class Example:
    goal: str
    url: str
    thought: str
    action: str
    score: float


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


class _Bm25:
    """BM25 scores of a fixed set of documents for a query, scaled so the best match scores 1 (0 when none match)."""

    def __init__(self, documents: Sequence[list[str]]) -> None:
        self.size = len(documents)
        self.retriever = bm25s.BM25()
        if self.size:
            # bm25s indexes a tokenized corpus; an empty document is one token no query has, so indices stay aligned.
            tokens = bm25s.tokenization.Tokenized(*_vocabulary([doc or ["\x00"] for doc in documents]))
            self.retriever.index(tokens, show_progress=False)

    def similarities(self, query: list[str]) -> list[float]:
        if not query or not self.size:
            return [0.0] * self.size
        scores = [float(x) for x in self.retriever.get_scores(query)]
        best = max(scores, default=0.0)
        return [x / best if best > 0 else 0.0 for x in scores]


def _vocabulary(documents: Sequence[list[str]]) -> tuple[list[list[int]], dict[str, int]]:
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(word, len(vocab)) for word in doc] for doc in documents]
    return ids, vocab


class ExampleIndex:
    def __init__(self, steps: Iterable[TrajectoryStep], config: RetrievalConfig | None = None) -> None:
        self.config = config or RetrievalConfig()
        steps = [s for s in steps if s.action_text]
        sources = {s.run_id for s in steps}
        self.demos = sum(source.startswith(DEMO_PREFIX) for source in sources)
        self.runs = len(sources) - self.demos
        # The same step of the same task is one example, however many runs took it.
        unique: dict[tuple[str, str, str], TrajectoryStep] = {}
        for s in steps:
            unique.setdefault((s.task, s.action_text, s.url), s)
        self.steps = list(unique.values())
        self._goals = _Bm25([words(s.task) for s in self.steps])
        self._pages = _Bm25([words(s.observation_text[:OBSERVATION_CHARS]) for s in self.steps])

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


def site_of(url: str) -> str:
    """What demonstrations are kept by: the address's host, lower-cased and without a leading `www.` (a site answers
    at both, and often redirects one to the other), with its port unless it is the scheme's default; "" without a
    host."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    if not host:
        return ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return host if port is None or port == DEFAULT_PORTS.get(parts.scheme) else f"{host}:{port}"


def site_key(text: str) -> str:
    """A site as a user names it (an address, a host, or the name given to `explore --site-name`), as stored."""
    text = text.strip()
    return site_of(text) if "://" in text else text.lower().removeprefix("www.")


def demo_steps(demos: Iterable[DemonstrationRecord]) -> list[TrajectoryStep]:
    """Demonstrations as steps of the pool: the instruction is the goal, each step's page, thought and action."""
    return [TrajectoryStep(run_id=f"{DEMO_PREFIX}{demo.demo_id}", task=demo.instruction, position=k, url=step.url,
                           observation_text=step.observation_text, thought=step.thought, action_text=step.action_text)
            for demo in demos for k, step in enumerate(demo.steps, start=1)]


async def load_examples(store: RunStore, config: RetrievalConfig, exclude_run: str, site: str = "",
                        past_runs: bool = True) -> ExampleIndex | None:
    """The pool from the store's finished runs (unless `past_runs` is off) and `site`'s demonstrations, built off the
    event loop; None when retrieval is off or the store cannot be read (a run without examples is still a run)."""
    if config.k == 0:
        return None

    def build() -> ExampleIndex:
        steps = store.finished_trajectories(config.runs, exclude_run=exclude_run) if past_runs else []
        if site:
            steps += demo_steps(store.demonstrations(site, limit=config.demos))
        return ExampleIndex(steps, config)

    try:
        return await asyncio.to_thread(build)
    except Exception:  # a broken store must not stop the user's task
        log.exception("could not read past runs for retrieval")
        return None
