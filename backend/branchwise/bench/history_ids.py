"""History-ids benchmark: does the way a policy prompt names the steps already taken make a small model reuse their
element ids on a page where they no longer exist?

    python -m branchwise.bench.history_ids STORE [--states 16] [--samples 3] [--seed 0] [--layout NAME ...]
        [--json PATH] [--replies PATH]

STORE is a run store (`runs.sqlite3`, or gzipped as the committed real-model run's). Its pages are real ones a real
run saw: a state qualifies when a step on its way here acted on an element whose id the state's page does not have (so
a reply that reuses it is a mistake, not a repeat). For each state, the policy prompt of action_aware's first
generator (history of 5) is built from the stored page, task and steps in each layout: the steps as recorded
(`click [88]`), as WebArena's action history writes them (`click [88] where [88] is link 'Forums'`), with the element
instead of its id (`click link 'Forums'`), and in the past tense with no id in the step or its reasoning (`clicked
link 'Forums'`, policy/steps.py). The local model (`make model`) answers each `--samples` times at the generators'
temperature, the layouts of a state one after the other so the server's prompt cache reads the page once. Every
reply is sorted by what its action targets. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import logging
import random
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..actions import ActionParseError, parse_action, parse_response
from ..harness.simulated.page import parse_page
from ..llm import ChatMessage
from ..local_model import LocalServerConfig
from ..models import serve_local_model
from ..policy.steps import element_words, step_words, without_element_ids
from ..search.context import thought_summary
from ..search.generate import GenerationConfig, GenerationInput, HistoryEntry, Variation, variation_messages
from ..settings import Settings

log = logging.getLogger(__name__)

CONTEXT_TOKENS = 4096  # as `make bench-real` serves the model
VARIATION = Variation(name="history-5", history=5)
OUTCOMES = ("on the page", "a step's id", "another id", "no element", "unparseable")
_TARGETED = re.compile(r"^(?P<verb>click|hover|type|press|select_option) \[(?P<id>\d+)\](?P<rest>.*)$", re.S)


@dataclass(frozen=True)
class Step:
    action: str  # as recorded: `click [88]`
    element: str  # what it acted on, on the page it ran on: `link 'Forums'`; "" for untargeted actions
    thought: str


@dataclass(frozen=True)
class State:
    run_id: str
    node_id: int
    task: str
    url: str
    page: str
    steps: tuple[Step, ...]

    @cached_property
    def page_ids(self) -> frozenset[int]:
        return frozenset(elements_of(self.page))

    @cached_property
    def step_ids(self) -> frozenset[int]:
        return frozenset(int(m["id"]) for s in self.steps if (m := _TARGETED.match(s.action)))


def as_recorded(step: Step) -> HistoryEntry:
    return HistoryEntry(summary=thought_summary(step.thought), action=step.action)


def webarena(step: Step) -> HistoryEntry:
    """WebArena's `action2str`: the id and what it was."""
    m = _TARGETED.match(step.action)
    action = f"{step.action} where [{m['id']}] is {step.element}" if m and step.element else step.action
    return HistoryEntry(summary=thought_summary(step.thought), action=action)


def element_only(step: Step) -> HistoryEntry:
    """The element in place of its id, in the action syntax."""
    m = _TARGETED.match(step.action)
    action = f"{m['verb']} {step.element}{m['rest']}" if m and step.element else step.action
    return HistoryEntry(summary=thought_summary(step.thought), action=action)


def past_tense(step: Step) -> HistoryEntry:
    """In words, the element named, no id anywhere (policy/steps.py)."""
    return HistoryEntry(summary=without_element_ids(thought_summary(step.thought)),
                        action=step_words(parse_action(step.action), step.element))


LAYOUTS: dict[str, Callable[[Step], HistoryEntry]] = {
    "as recorded": as_recorded, "WebArena's": webarena, "element, no id": element_only, "past tense": past_tense}


def elements_of(page: str) -> dict[int, str]:
    """`[88] link 'Forums'` lines of a page as {88: "link 'Forums'"}, in the words a history names them by."""
    return {e.id: element_words(e.role, e.name) for e in parse_page(page).elements}


def load_states(store: Path) -> list[State]:
    """Every state of the store the policy was asked at whose way here acted on an element its page does not
    have. `store` may be gzipped (the committed runs.sqlite3.gz): it is read from a copy."""
    if store.suffix == ".gz":
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / store.stem
            with gzip.open(store) as packed, copy.open("wb") as out:
                shutil.copyfileobj(packed, out)
            return load_states(copy)
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    tasks = {r["run_id"]: r["task"] for r in db.execute("SELECT run_id, task FROM runs")}
    nodes = {(r["run_id"], r["node_id"]): r for r in db.execute(
        "SELECT run_id, node_id, parent_id, url, action_text, thought, status, observation_text FROM nodes")}
    db.close()
    states = []
    for (run_id, node_id), row in sorted(nodes.items()):
        # A state the policy was asked at (it has children), reached by actions that ran.
        if not row["observation_text"] or row["parent_id"] is None or row["status"] != "expanded":
            continue
        chain, at = [], row
        while at is not None and at["parent_id"] is not None:
            chain.append(at)
            at = nodes.get((run_id, at["parent_id"]))
        if at is None or any(node["status"] == "invalid" for node in chain):
            continue
        steps = []
        for node in reversed(chain):
            if not node["action_text"]:
                continue
            m = _TARGETED.match(node["action_text"])
            parent = nodes[(run_id, node["parent_id"])]
            element = elements_of(parent["observation_text"]).get(int(m["id"]), "") if m else ""
            steps.append(Step(node["action_text"], element, node["thought"]))
        state = State(run_id, node_id, tasks.get(run_id, ""), row["url"], row["observation_text"], tuple(steps))
        if state.step_ids - state.page_ids:
            states.append(state)
    return states


def outcome(reply: str, state: State) -> str:
    try:
        action = parse_response(reply).action
    except ActionParseError:
        return "unparseable"
    element_id = action.element_id
    if element_id is None:
        return "no element"
    if element_id in state.page_ids:
        return "on the page"
    return "a step's id" if element_id in state.step_ids else "another id"


def messages_for(state: State, layout: Callable[[Step], HistoryEntry], config: GenerationConfig) -> list[ChatMessage]:
    history = [layout(s) for s in state.steps]
    data = GenerationInput(task=state.task, observation=state.page, url=state.url, history=history)
    return list(variation_messages(data, VARIATION, config))


def reply_record(state: State, layout: str, seen: str, text: str) -> str:
    """One reply as a JSON line of `--replies`, to read what the model wrote (an unparseable answer, say)."""
    return json.dumps({"run_id": state.run_id, "node_id": state.node_id, "layout": layout, "outcome": seen,
                       "reply": text}) + "\n"


async def measure(settings: Settings, states: Sequence[State], samples: int, layouts: Sequence[str],
                  replies: Path | None = None) -> dict[str, Counter[str]]:
    """Each state's prompt in each layout, answered `samples` times; `replies`: a JSON-lines file every reply is
    added to as it comes."""
    counts: dict[str, Counter[str]] = {name: Counter() for name in layouts}
    async with serve_local_model(settings, LocalServerConfig(context_tokens=CONTEXT_TOKENS)) as setup:
        config = GenerationConfig()
        config = config.model_copy(update={"prompt": config.prompt.fitted(setup.client.config)})
        for number, state in enumerate(states, 1):
            for name in layouts:
                reply = await setup.client.complete(messages_for(state, LAYOUTS[name], config), n=samples,
                                                    temperature=config.temperature)
                seen = [outcome(text, state) for text in reply.texts]
                counts[name].update(seen)
                if replies is not None:
                    with replies.open("a", encoding="utf-8") as out:
                        out.writelines(reply_record(state, name, o, t) for o, t in zip(seen, reply.texts, strict=True))
                log.info("state %d/%d (%s #%d), %s: %s", number, len(states), state.run_id, state.node_id, name,
                         ", ".join(seen))
    return counts


def render(counts: dict[str, Counter[str]], states: int, samples: int) -> str:
    lines = [f"{states} states × {samples} replies per layout", "",
             "| history layout | replies | " + " | ".join(OUTCOMES) + " |",
             "|---|--:|" + "--:|" * len(OUTCOMES)]
    for name, seen in counts.items():
        total = sum(seen.values())
        cells = [f"{seen[o]} ({seen[o] / total:.0%})" if total else "0" for o in OUTCOMES]
        lines.append(f"| {name} | {total} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path, help="a run store (runs.sqlite3 or runs.sqlite3.gz); read only")
    parser.add_argument("--states", type=int, default=16, help="states drawn from those that qualify")
    parser.add_argument("--samples", type=int, default=3, help="replies per state and layout")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layout", action="append", choices=tuple(LAYOUTS), dest="layouts",
                        help="a history layout to ask with (repeatable; default: all)")
    parser.add_argument("--json", type=Path, help="write the counts here")
    parser.add_argument("--replies", type=Path, help="add every reply here, one JSON line each")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    qualifying = load_states(args.store)
    states = random.Random(args.seed).sample(qualifying, min(args.states, len(qualifying)))
    log.info("%d of %d qualifying states", len(states), len(qualifying))
    settings = Settings.load()
    counts = asyncio.run(measure(settings, states, args.samples, args.layouts or tuple(LAYOUTS), args.replies))
    sys.stdout.write(render(counts, len(states), args.samples) + "\n")
    if args.json:
        args.json.write_text(json.dumps({name: dict(seen) for name, seen in counts.items()}, indent=1))


if __name__ == "__main__":
    main()
