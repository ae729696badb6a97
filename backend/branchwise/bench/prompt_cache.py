"""Prompt-cache benchmark: what WebPilot's page-first judge prompts save on llama.cpp, against each agent's own
system message first, measured in the same run.

    python -m branchwise.bench.prompt_cache [--nodes 2] [--json PATH]

mcts, at each node, asks the Explorer (WebArena's policy prompt) for an action on the parent page, then the
reflection, the Appraiser and the Controller about the page the action reached. Their prompts begin with one shared
system message, the task and that page (search/webpilot.py), so a server that caches prompts reads the page once.
The baseline puts each agent's own text first, as its system message, the page after it (the layout before, with
today's texts, whose "the page above" it leaves as they are: what is measured is the reading, not the wording): every
judge then reads the whole page again. Each layout runs on a fresh local model server (`make model`), the same calls
in the same order on the same synthetic catalogue pages, one-token answers, so a call's seconds are its prompt's
reading. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..chat_model import split_instructions
from ..llm import ChatMessage
from ..local_model import LocalServerConfig
from ..models import serve_local_model
from ..policy.prompts import PromptConfig, build_cot_messages
from ..search.webpilot import (
    Subtask,
    WebPilotPrompts,
    appraise_messages,
    control_messages,
    reflect_messages,
)
from ..settings import Settings
from .pages import ADJECTIVES, BRANDS, CATEGORIES, NOUNS

log = logging.getLogger(__name__)

TASK = "What is the price of the cheapest Garden product?"
SUBTASK = Subtask("Open the Garden category")
LAYOUTS = ("agent first", "page first")


@dataclass(frozen=True)
class Call:
    node: int
    role: str
    seconds: float
    prompt_tokens: int
    cached_tokens: int


def catalogue(page: int, cards: int = 90) -> str:
    """An accessibility-tree text of a shop listing (~2,300 of its tokens at 90 cards), different for every `page`."""
    rng = random.Random(page)
    lines = ["[1] RootWebArea 'Shop'", "[2] searchbox 'Search products'"]
    lines += [f"[{3 + i}] link '{name}'" for i, name in enumerate(CATEGORIES)]
    for card in range(cards):
        at = 20 + 3 * card
        name = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} {page * 100 + card}"
        lines += [f"[{at}] link '{name}'", f"[{at + 1}] StaticText '{rng.choice(BRANDS)} · "
                  f"${rng.randint(5, 400)}.{rng.randint(0, 99):02d}'", f"[{at + 2}] button 'Add to cart'"]
    return "\n".join(lines)


def agent_first(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The baseline layout of a WebPilot judge's prompt: its agent's part as the system message, the page after."""
    head, agent = split_instructions(messages[1].content)
    assert agent is not None, "a WebPilot agent's prompt ends with its part"
    return [ChatMessage(role="system", content=agent.strip()), ChatMessage(role="user", content=head.strip())]


def node_calls(nodes: int, layout: str) -> list[tuple[int, str, list[ChatMessage]]]:
    prompts, agents = PromptConfig(), WebPilotPrompts()
    calls = []
    for node in range(nodes):
        parent, child = catalogue(node), catalogue(node + 1)
        parent_url, url = f"http://shop/category/{node}", f"http://shop/category/{node + 1}"
        calls.append((node, "explorer", build_cot_messages(TASK, parent, parent_url, None, config=prompts)))
        judges = {"reflect": reflect_messages(TASK, SUBTASK, "click [7]", "open Garden", parent_url, url, child,
                                              agents),
                  "appraise": appraise_messages(TASK, SUBTASK, "click [7]", "another listing opened", url, child,
                                                agents),
                  "control": control_messages(TASK, SUBTASK, ["click [7]"], url, child, agents)}
        for role, messages in judges.items():
            calls.append((node, role, agent_first(messages) if layout == "agent first" else messages))
    return calls


async def run_layout(settings: Settings, nodes: int, layout: str) -> list[Call]:
    results = []
    async with serve_local_model(settings, LocalServerConfig()) as setup:
        for node, role, messages in node_calls(nodes, layout):
            started = time.monotonic()
            reply = await setup.client.complete(messages, max_tokens=1, temperature=0.0)
            results.append(Call(node, role, time.monotonic() - started, reply.usage.prompt_tokens,
                                reply.usage.cached_prompt_tokens))
            log.info("%s: node %d %s %.1f s", layout, node, role, results[-1].seconds)
    return results


def render(runs: dict[str, list[Call]]) -> str:
    lines = ["| layout | node | call | s | prompt tokens | cached |", "|---|--:|---|--:|--:|--:|"]
    for layout, calls in runs.items():
        lines += [f"| {layout} | {c.node + 1} | {c.role} | {c.seconds:.1f} | {c.prompt_tokens:,} | "
                  f"{c.cached_tokens:,} |" for c in calls]
    judged = {layout: sum(c.seconds for c in calls if c.role != "explorer") for layout, calls in runs.items()}
    lines.append("")
    lines += [f"judges' seconds, {layout}: {seconds:.1f}" for layout, seconds in judged.items()]
    if judged.get("agent first"):
        lines.append(f"page first / agent first: {judged['page first'] / judged['agent first']:.2f}")
    return "\n".join(lines)


async def main_async(nodes: int) -> dict[str, list[Call]]:
    settings = Settings.load()
    return {layout: await run_layout(settings, nodes, layout) for layout in LAYOUTS}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    runs = asyncio.run(main_async(args.nodes))
    sys.stdout.write(render(runs) + "\n")
    if args.json:
        args.json.write_text(json.dumps({k: [asdict(c) for c in v] for k, v in runs.items()}, indent=1))


if __name__ == "__main__":
    main()
