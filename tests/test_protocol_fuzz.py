"""Protocol fuzzing: 10,000 seeded messages from a paired client, built by mutating the protocol's own examples
(fields dropped, renamed or given values of every JSON type, strings with surrogates and control characters, deep
nesting, huge numbers, truncated or corrupted text, binary frames). The backend must answer and keep going: the
connection stays open throughout, nothing is logged as an error, and a normal session works afterwards."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from branchwise.protocol import Error, ListTabs, Ping, StartRun, TabInfo, Tabs

from extension_client import paired_socket, running_backend

EXAMPLES = Path(__file__).resolve().parents[1] / "protocol" / "examples"
MESSAGES = 10_000
BATCH = 100  # messages between two pings, whose pong marks where the answers to a batch end
SEED = 20261126
DEEP = "__nested_lists__"

JSON = Any


def _odd_string(rng: random.Random) -> str:
    pieces = ["", "\ud800", "\udfff", "\x00", "\u202e", "🙂", "\\", '"', "\n", "ä" * 3, "a" * rng.randint(1, 5000),
              "<script>", "%s%n", "ws://127.0.0.1/ws", "0" * 400]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))


def _odd_value(rng: random.Random, depth: int = 0) -> JSON:
    kind = rng.randrange(12)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**31, -(2**63), 2**64 + 1, 10**400])
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e308, float("nan"), float("inf"), float("-inf")])
    if kind in (4, 5, 6):
        return _odd_string(rng)
    if kind == 7 and depth < 3:
        return [_odd_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == 8 and depth < 3:
        return {_odd_string(rng)[:20]: _odd_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if kind == 9:
        return f"{DEEP}{rng.choice([10, 200, 1500])}"  # spliced in as text: too deep for json.dumps
    return rng.choice(["hello", "ping", "observation", "act_result", "start_run", "error", "tab_event"])


def _paths(value: JSON, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:5]):
            found += _paths(item, (*prefix, index))
    return found


def _mutate(message: JSON, rng: random.Random) -> JSON:
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(message))
        if not path:
            message = _odd_value(rng) if rng.random() < 0.1 else message
            continue
        parent = message
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        action = rng.randrange(4)
        if action == 0 and isinstance(parent, dict):
            del parent[last]
        elif action == 1 and isinstance(parent, dict):
            parent[_odd_string(rng)[:30]] = parent.pop(last)
        else:
            parent[last] = _odd_value(rng)
    return message


def _encode(message: JSON, rng: random.Random) -> str | bytes:
    text = json.dumps(message, ensure_ascii=rng.random() < 0.5)
    text = re.sub(rf'"{DEEP}(\\d+)"', lambda m: "[" * int(m[1]) + "]" * int(m[1]), text)
    roll = rng.random()
    if roll < 0.08:
        text = text[: rng.randrange(len(text) + 1)]
    elif roll < 0.14:
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.choice(["}", "\\", '"', "\x00", "ÿ", "]]]"]) + text[at:]
    raw = text.encode("utf-8", errors="surrogatepass")
    if roll > 0.94:
        return raw + rng.choice([b"\xff\xfe", b"\xc3", b""])  # a binary frame, maybe not UTF-8
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return raw  # a text frame must be valid UTF-8 (the socket library enforces it); a binary one need not be
    return text


def fuzz_messages(seed: int, count: int) -> list[str | bytes]:
    rng = random.Random(seed)
    examples = [json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.json"))]
    return [_encode(_mutate(json.loads(json.dumps(rng.choice(examples))), rng), rng) for _ in range(count)]


async def _answers_until_pong(ws: ClientConnection, ping_id: str) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    while True:
        answer: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if answer.get("type") == "pong" and answer.get("reply_to") == ping_id:
            return answers
        answers.append(answer)


def test_ten_thousand_generated_messages_get_answers_and_the_session_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    messages = fuzz_messages(SEED, MESSAGES)
    assert len(set(messages)) > MESSAGES * 0.8  # varied; the rest are examples left whole, valid messages in between

    async def start_run(message: StartRun) -> str:
        return "fuzz-run"

    async def main() -> tuple[int, list[dict[str, Any]]]:
        async with running_backend(tmp_path, keepalive_seconds=3600) as backend:
            backend.hub.start_run_handler = start_run
            ws = await paired_socket(backend)
            link = backend.hub.link
            answers: list[dict[str, Any]] = []
            for start in range(0, MESSAGES, BATCH):
                for raw in messages[start:start + BATCH]:
                    await ws.send(raw)
                ping = Ping()
                await ws.send(ping.model_dump_json())
                answers += await _answers_until_pong(ws, ping.id)
                assert backend.hub.link is link, f"the connection was lost after message {start + BATCH}"
            # A normal session afterwards: the backend asks, the client answers, the backend reads the answer.
            assert link is not None
            asking = asyncio.create_task(link.request(ListTabs(), Tabs))
            command = json.loads(await asyncio.wait_for(ws.recv(), 5))
            while command["type"] != "list_tabs":  # a late answer to a fuzzed start_run may come first
                command = json.loads(await asyncio.wait_for(ws.recv(), 5))
            tab = TabInfo(tab_id=7, index=0, url="http://shop.local/", title="Shop", active=True)
            await ws.send(Tabs(reply_to=command["id"], tabs=[tab]).model_dump_json())
            assert (await asyncio.wait_for(asking, 5)).tabs[0].tab_id == 7
            await ws.close()
            return len(messages), answers

    with caplog.at_level(logging.WARNING):
        sent, answers = asyncio.run(asyncio.wait_for(main(), 300))
    errors = [a for a in answers if a["type"] == "error"]
    for error in errors:
        Error.model_validate(error)  # every error reply is itself a valid message
    # Most mutations break a message; each broken one is answered with the reason, none are dropped silently.
    assert sum(e["code"] in ("invalid_message", "too_large") for e in errors) > sent * 0.5
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage()[:200] for r in
                                                                          caplog.records if r.levelno >= logging.ERROR]
