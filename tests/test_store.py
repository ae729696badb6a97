"""The run store: every record type round-trips, lookups explain themselves, nothing written is lost to a crash
or to concurrent writers, and `branchwise show` draws the tree as expected."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from branchwise.core.budget import Limits
from branchwise.core.usage import Usage
from branchwise.store import (
    SCHEMA_VERSION,
    AuditRecord,
    BacktrackRecord,
    ClassificationRecord,
    DemonstrationRecord,
    DemoStep,
    ModelCallRecord,
    NodeRecord,
    RecordLost,
    RunNotFound,
    RunRecord,
    RunStore,
    RunSummary,
    RunWriter,
    StoredRun,
    UsageRecord,
    ValueRecord,
    default_store_path,
    format_run,
    format_runs,
)
from branchwise.store.sqlite import _MIGRATIONS

T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def run_record(run_id: str, started_at: datetime = T0, task: str = "Buy the cheapest red mug") -> RunRecord:
    return RunRecord(run_id=run_id, task=task, strategy="best_first", backtrack_mode="speculative", profile="paper",
                     temperature=0.0, examples=True, max_steps=30, limits=Limits(max_model_calls=100, timeout_s=90.5),
                     model="gpt-test", start_url="http://shop.test/", started_at=started_at)


def node(run_id: str, node_id: int, parent_id: int | None, **fields: object) -> NodeRecord:
    return NodeRecord.model_validate({"run_id": run_id, "node_id": node_id, "parent_id": parent_id,
                                      "created_at": T0 + timedelta(seconds=node_id), **fields})


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter, so nothing cached in this process can stand in for what is on disk."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore.open(default_store_path(tmp_path / "data")) as s:
        yield s


def test_default_path_and_schema_version(tmp_path: Path) -> None:
    path = default_store_path(tmp_path / "nested" / "data")
    assert path == tmp_path / "nested" / "data" / "runs.sqlite3"
    with RunStore(path):
        pass
    with RunStore(path):  # reopening an existing store is a no-op migration
        pass
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(RuntimeError, match="schema version"):
        RunStore(path)


def test_every_record_type_round_trips(store: RunStore) -> None:
    run = run_record("r1")
    nodes = [node("r1", 0, None, url="http://shop.test/", title="Shop", value=0.5, checkpoint=True,
                  status="expanded", observation_text="[1] RootWebArea 'Shop'\n" * 500),
             node("r1", 1, 0, depth=1, url="http://shop.test/cart", action_text="click [7]", action_class="safe",
                  thought="open the cart", reward=0.25, checkpoint=False, status="terminal", answer="42")]
    classification = ClassificationRecord(run_id="r1", node_id=1, action_text="click [9]",
                                          action_class="destructive", reasons=["submits a form", "says 'Buy'"],
                                          decision="denied", decided_by="user")
    value = ValueRecord(run_id="r1", node_id=1, kind="reward", score=0.25, method="mean", samples=[0.1, 0.4])
    backtrack = BacktrackRecord(run_id="r1", source=1, target=0, mode="speculative", outcome="aborted",
                                reason="page changed", replayed_actions=2, env_actions=3, wall_ms=12.5,
                                created_at=T0)
    usage = [UsageRecord(run_id="r1", role="value", calls=2, prompt_tokens=300, completion_tokens=20),
             UsageRecord(run_id="r1", role="policy", calls=3, prompt_tokens=900, completion_tokens=80, retries=1,
                         cached_prompt_tokens=600)]

    store.start_run(run)
    for n in nodes:
        store.upsert_node(n)
    store.add_classification(classification)
    store.add_classification(classification.model_copy(update={"action_class": "safe", "reasons": [],
                                                               "decision": None, "decided_by": None}))
    store.add_value(value)
    store.add_backtrack(backtrack)
    for u in usage:
        store.set_usage(u)
    store.set_trajectory("r1", [0, 1])
    finished = T0 + timedelta(seconds=30)
    store.finish_run("r1", "finished", answer="42", reason="", finished_at=finished)

    loaded = store.load_run("r1")
    assert loaded == StoredRun(
        run=run.model_copy(update={"status": "finished", "answer": "42", "finished_at": finished}),
        nodes=nodes,
        classifications=[classification, classification.model_copy(
            update={"action_class": "safe", "reasons": [], "decision": None, "decided_by": None})],
        values=[value], backtracks=[backtrack], usage=[usage[1], usage[0]], trajectory=[0, 1])

    store.set_trajectory("r1", [0])  # replaced, not appended
    store.set_usage(usage[1].model_copy(update={"calls": 5}))  # upserted per run and role
    again = store.load_run("r1")
    assert again.trajectory == [0]
    assert [(u.role, u.calls) for u in again.usage] == [("policy", 5), ("value", 2)]


def test_write_errors_are_clear(store: RunStore) -> None:
    store.start_run(run_record("r1"))
    with pytest.raises(ValueError, match="already recorded"):
        store.start_run(run_record("r1"))
    with pytest.raises(RunNotFound, match="no run 'nope'"):
        store.finish_run("nope", "failed")
    with pytest.raises(ValueError, match="not 'running'"):
        store.finish_run("r1", "running")  # type: ignore[arg-type]
    with pytest.raises(sqlite3.IntegrityError):  # foreign keys are on
        store.upsert_node(node("nope", 0, None))


def test_node_upsert_updates_what_search_learns(store: RunStore) -> None:
    store.start_run(run_record("r1"))
    first = node("r1", 3, None, url="http://a/", observation_text="the page as it was seen")
    store.upsert_node(first)
    store.upsert_node(node("r1", 3, None, url="http://a/", value=0.75, reward=0.5, checkpoint=True,
                           status="expanded", created_at=T0 + timedelta(hours=1)))
    (stored,) = store.load_run("r1").nodes
    assert (stored.value, stored.reward, stored.checkpoint, stored.status) == (0.75, 0.5, True, "expanded")
    assert stored.observation_text == "the page as it was seen"  # an empty observation keeps the stored one
    assert stored.created_at == first.created_at  # the first write's time is when the node was created
    store.upsert_node(stored.model_copy(update={"observation_text": "replayed page", "checkpoint": None}))
    (stored,) = store.load_run("r1").nodes
    assert (stored.observation_text, stored.checkpoint) == ("replayed page", None)


def test_list_runs_newest_first_with_counts_and_no_observations(store: RunStore) -> None:
    for i, run_id in enumerate(["old", "mid", "new"]):
        store.start_run(run_record(run_id, started_at=T0 + timedelta(minutes=i), task=f"task {run_id}"))
    for i in range(4):
        store.upsert_node(node("mid", i, None if i == 0 else 0, observation_text="x" * 100_000))
    for outcome in ("committed", "committed", "aborted", "failed"):
        store.add_backtrack(BacktrackRecord(run_id="mid", source=3, target=0, mode="naive", outcome=outcome))
    store.finish_run("mid", "finished", answer="done")

    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    runs = store.list_runs()
    store._conn.set_trace_callback(None)
    assert not any("observation" in s for s in statements)

    assert [r.run_id for r in runs] == ["new", "mid", "old"]
    assert runs[1] == RunSummary(run_id="mid", task="task mid", strategy="best_first", status="finished",
                                 started_at=T0 + timedelta(minutes=1), finished_at=runs[1].finished_at, nodes=4,
                                 backtracks_committed=2, backtracks_aborted=1, answer="done")
    assert runs[1].finished_at is not None
    assert (runs[0].nodes, runs[0].backtracks_committed, runs[0].status) == (0, 0, "running")
    assert [r.run_id for r in store.list_runs(limit=2)] == ["new", "mid"]


def test_prefix_lookup(store: RunStore) -> None:
    for run_id in ["abc123000001", "abc123000002", "def456000000", "abc", "a_c999"]:
        store.start_run(run_record(run_id))
    assert store.load_run("def").run.run_id == "def456000000"
    assert store.load_run("abc123000002").run.run_id == "abc123000002"
    assert store.load_run("abc").run.run_id == "abc"  # an exact id wins over longer ids it prefixes
    assert store.load_run(" DEF4 ").run.run_id == "def456000000"

    with pytest.raises(RunNotFound) as ambiguous:
        store.load_run("abc1")
    assert str(ambiguous.value) == "'abc1' matches several runs (abc123000001, abc123000002); type more of the id"
    assert isinstance(ambiguous.value, KeyError)
    with pytest.raises(RunNotFound, match=r"no run matches 'zzz'; `branchwise runs` lists the recorded runs"):
        store.load_run("zzz")
    with pytest.raises(RunNotFound, match="no run matches 'ab_'"):  # LIKE wildcards are taken literally
        store.load_run("ab_")
    with pytest.raises(RunNotFound, match="no run id given"):
        store.load_run("")


WRITE_AND_CRASH = """
    import os, signal, sys
    from pathlib import Path
    from branchwise.store import NodeRecord, RunRecord, RunStore
    store = RunStore(Path(sys.argv[1]))
    store.start_run(RunRecord(run_id="crashed", task="t"))
    for i in range(5):
        store.upsert_node(NodeRecord(run_id="crashed", node_id=i, parent_id=None if i == 0 else 0, depth=min(i, 1),
                                     observation_text=f"page {i}"))
    store.set_trajectory("crashed", [0, 4])
    os.kill(os.getpid(), signal.SIGKILL)
"""

READ = """
    import json, sys
    from pathlib import Path
    from branchwise.store import RunStore
    with RunStore(Path(sys.argv[1])) as store:
        run = store.load_run(sys.argv[2])
    print(json.dumps({"status": run.run.status, "nodes": [n.observation_text for n in run.nodes],
                      "trajectory": run.trajectory}))
"""


def test_writes_are_visible_to_a_new_process_while_the_writer_is_still_open(tmp_path: Path) -> None:
    path = default_store_path(tmp_path)
    store = RunStore(path)
    try:
        store.start_run(run_record("open1"))
        store.upsert_node(node("open1", 0, None, observation_text="root page"))
        store.upsert_node(node("open1", 1, 0, observation_text="child page"))
        result = run_python(READ, str(path), "open1")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == {"status": "running", "nodes": ["root page", "child page"],
                                             "trajectory": []}
    finally:
        store.close()


def test_a_killed_writer_loses_nothing_and_its_run_is_marked_interrupted(tmp_path: Path) -> None:
    path = default_store_path(tmp_path)
    crashed = run_python(WRITE_AND_CRASH, str(path))
    assert crashed.returncode == -9, crashed.stderr

    result = run_python(READ, str(path), "crash")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"status": "running", "nodes": [f"page {i}" for i in range(5)],
                                         "trajectory": [0, 4]}

    with RunStore(path) as store:
        store.start_run(run_record("alive"))  # this process is alive: its run is left alone
        assert store.mark_interrupted() == 1
        assert store.mark_interrupted() == 0
        run = store.load_run("crashed").run
        assert (run.status, run.reason) == ("interrupted", "the backend stopped before the run finished")
        assert run.finished_at is not None
        assert store.load_run("alive").run.status == "running"
        assert len(store.load_run("crashed").nodes) == 5


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = default_store_path(tmp_path)
    threads, per_thread = 8, 40
    with RunStore(path) as shared, RunStore(path) as other:  # two connections to one file, as two processes would
        shared.start_run(run_record("busy"))
        barrier = threading.Barrier(threads)

        def write(worker: int) -> None:
            store = shared if worker % 2 else other
            barrier.wait()
            for i in range(per_thread):
                node_id = worker * per_thread + i
                store.upsert_node(node("busy", node_id, None, observation_text=f"page {node_id}"))
                store.upsert_node(node("busy", node_id, None, value=node_id / 1000, status="expanded"))
                store.add_value(ValueRecord(run_id="busy", node_id=node_id, kind="value", score=node_id / 1000))
                store.add_backtrack(BacktrackRecord(run_id="busy", source=node_id, target=0, mode="speculative",
                                                    outcome="committed"))
                store.set_usage(UsageRecord(run_id="busy", role="policy", calls=i + 1))
                store.list_runs()

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(write, range(threads)))

        loaded = shared.load_run("busy")
        total = threads * per_thread
        assert [n.node_id for n in loaded.nodes] == list(range(total))
        assert all(n.status == "expanded" and n.observation_text == f"page {n.node_id}" for n in loaded.nodes)
        assert len(loaded.values) == len(loaded.backtracks) == total
        assert [u.calls for u in loaded.usage] == [per_thread]
        assert shared.list_runs()[0].backtracks_committed == total


def test_asyncio_callers_use_to_thread(tmp_path: Path) -> None:
    async def main(store: RunStore) -> StoredRun:
        await asyncio.to_thread(store.start_run, run_record("aio"))
        await asyncio.gather(*(asyncio.to_thread(store.upsert_node, node("aio", i, None)) for i in range(20)))
        return await asyncio.to_thread(store.load_run, "aio")

    with RunStore(default_store_path(tmp_path)) as store:
        assert len(asyncio.run(main(store)).nodes) == 20


def small_run() -> StoredRun:
    run = run_record("7f3a9c2b1d40").model_copy(update={
        "status": "finished", "answer": "Order #1042 placed", "finished_at": T0 + timedelta(seconds=42.5)})
    nodes = [
        node(run.run_id, 0, None, url="http://shop.test/", value=0.5, checkpoint=True, status="expanded"),
        node(run.run_id, 1, 0, depth=1, action_text="click [7]", action_class="safe", reward=0.62, value=0.55,
             checkpoint=True, status="expanded"),
        node(run.run_id, 2, 0, depth=1, action_text="click [8]", action_class="safe", reward=0.2, status="dead",
             note="led back to the page of #0"),
        node(run.run_id, 3, 1, depth=2, action_text="type [12] [red mug]", action_class="safe", reward=0.7,
             value=0.8, status="open"),
        node(run.run_id, 4, 1, depth=2, action_text="click [15]", action_class="destructive", reward=0.9,
             checkpoint=False, status="expanded"),
        node(run.run_id, 5, 4, depth=3, action_text="stop [Order #1042 placed]", action_class="terminating",
             status="terminal", answer="Order #1042 placed"),
    ]
    return StoredRun(
        run=run, nodes=nodes, trajectory=[0, 1, 4, 5],
        classifications=[
            ClassificationRecord(run_id=run.run_id, node_id=1, action_text="click [7]", action_class="safe"),
            ClassificationRecord(run_id=run.run_id, node_id=1, action_text="click [15]",
                                 action_class="destructive", reasons=["button says 'Place order'", "in a form"],
                                 decision="approved", decided_by="user"),
        ],
        backtracks=[
            BacktrackRecord(run_id=run.run_id, source=2, target=1, mode="speculative", outcome="committed",
                            reason="dead end", replayed_actions=1, env_actions=2, wall_ms=812.4),
            BacktrackRecord(run_id=run.run_id, source=3, target=4, mode="naive", outcome="aborted",
                            replayed_actions=2, env_actions=3, wall_ms=1500),
        ],
        usage=[UsageRecord(run_id=run.run_id, role="policy", calls=6, prompt_tokens=12000, completion_tokens=900),
               UsageRecord(run_id=run.run_id, role="value", calls=4, prompt_tokens=8000, completion_tokens=40,
                           retries=1)],
    )


def test_format_run_draws_tree_trajectory_and_backtracks(tmp_path: Path) -> None:
    expected_run = small_run()
    with RunStore(default_store_path(tmp_path)) as store:  # render what was read back, not the inputs
        store.start_run(expected_run.run.model_copy(update={"status": "running", "answer": "", "finished_at": None}))
        for n in expected_run.nodes:
            store.upsert_node(n)
        for c in expected_run.classifications:
            store.add_classification(c)
        for b in expected_run.backtracks:
            store.add_backtrack(b)
        for u in expected_run.usage:
            store.set_usage(u)
        store.set_trajectory(expected_run.run.run_id, expected_run.trajectory)
        store.finish_run(expected_run.run.run_id, "finished", answer="Order #1042 placed",
                         finished_at=expected_run.run.finished_at)
        stored = store.load_run("7f3a")
    assert stored == expected_run

    started = T0.astimezone().strftime("%Y-%m-%d %H:%M")
    finished = (T0 + timedelta(seconds=42.5)).astimezone().strftime("%Y-%m-%d %H:%M")
    assert format_run(stored).splitlines() == [
        "Run 7f3a9c2b1d40: finished",
        "Task:      Buy the cheapest red mug",
        "Strategy:  best_first (backtracking: speculative, profile paper, temperature 0, retrieved steps)",
        "Model:     gpt-test",
        "Start URL: http://shop.test/",
        f"Started:   {started}, finished {finished} (took 42.5 s)",
        "Answer:    Order #1042 placed",
        "",
        "Usage:",
        "  role    calls  prompt  completion  retries",
        "  policy      6   12000         900        0",
        "  value       4    8000          40        1",
        "  total      10   20000         940        1",
        "",
        "Tree (6 nodes, ★ = chosen trajectory):",
        "★ #0 (start) http://shop.test/  v=0.50 ✓checkpoint expanded",
        "├── ★ #1 click [7]  [safe] r=0.62 v=0.55 ✓checkpoint expanded",
        "│   ├── #3 type [12] [red mug]  [safe] r=0.70 v=0.80 open",
        "│   └── ★ #4 click [15]  [destructive] r=0.90 expanded",
        '│       └── ★ #5 stop [Order #1042 placed]  [terminating] terminal answer="Order #1042 placed"',
        "└── #2 click [8]  [safe] r=0.20 dead (led back to the page of #0)",
        "",
        "Chosen trajectory:",
        "  1. #1 click [7]",
        "  2. #4 click [15]",
        "  3. #5 stop [Order #1042 placed]",
        "",
        "Backtracks:",
        "  #2 -> #1  speculative committed  replayed=1 env_actions=2 wall_ms=812  dead end",
        "  #3 -> #4  naive aborted  replayed=2 env_actions=3 wall_ms=1500",
        "",
        "Destructive actions:",
        "  #1 click [15]: approved by user",
        "    - button says 'Place order'",
        "    - in a form",
    ]


def test_the_usage_shows_the_prompt_tokens_the_server_had_cached_only_when_it_said() -> None:
    run = run_record("c1")
    cached = [UsageRecord(run_id="c1", role="policy", calls=3, prompt_tokens=900, completion_tokens=80,
                          cached_prompt_tokens=600),
              UsageRecord(run_id="c1", role="value", calls=1, prompt_tokens=300, completion_tokens=5)]
    lines = format_run(StoredRun(run=run, usage=cached)).splitlines()
    at = lines.index("Usage:")
    assert lines[at + 1].split() == ["role", "calls", "prompt", "of", "which", "cached", "completion", "retries"]
    assert lines[at + 2].split() == ["policy", "3", "900", "600", "80", "0"]
    assert lines[at + 4].split() == ["total", "4", "1200", "600", "85", "0"]
    plain = [u.model_copy(update={"cached_prompt_tokens": 0}) for u in cached]
    assert "cached" not in format_run(StoredRun(run=run, usage=plain))


def test_format_run_of_an_empty_interrupted_run_and_orphans() -> None:
    run = run_record("e1").model_copy(update={"status": "interrupted", "reason": "backend died", "model": ""})
    text = format_run(StoredRun(run=run, nodes=[node("e1", 2, 1, action_text="click [3]")]))
    assert "Reason:    backend died" in text
    assert "Usage: none recorded" in text
    assert "\n#2 click [3]  open\n" in text  # a node whose parent was never written is still drawn
    assert "Chosen trajectory: none" in text and "Backtracks: none" in text and "Destructive actions: none" in text
    assert "Model:" not in text


def test_format_runs_table() -> None:
    assert format_runs([]) == "No runs recorded yet."
    summaries = [
        RunSummary(run_id="7f3a9c2b1d40", task="Buy the cheapest red mug\nquickly", strategy="best_first",
                   status="finished", started_at=T0, nodes=12, backtracks_committed=3, backtracks_aborted=1,
                   answer="Order #1042 placed"),
        RunSummary(run_id="00aa11bb22cc", task="x" * 80, strategy="", status="running", started_at=T0, nodes=1),
    ]
    when = T0.astimezone().strftime("%Y-%m-%d %H:%M")
    assert format_runs(summaries).splitlines() == [
        f"ID            STARTED{' ' * (len(when) - 7)}  STRATEGY    STATUS    NODES  BT C/A  TASK"
        f"{' ' * 44}  ANSWER",
        f"7f3a9c2b1d40  {when}  best_first  finished     12     3/1  Buy the cheapest red mug quickly"
        f"{' ' * 16}  Order #1042 placed",
        f"00aa11bb22cc  {when}  -           running       1     0/0  {'x' * 47}…",
    ]


def test_format_run_shows_where_an_action_led_to_another_page() -> None:
    nodes = [node("u1", 0, None, url="http://shop.test/"),
             node("u1", 1, 0, action_text="click [7]", url="http://shop.test/orders"),
             node("u1", 2, 1, action_text="scroll [down]", url="http://shop.test/orders"),
             node("u1", 3, 2, action_text="click [9]"),  # not observed yet: no URL to show
             node("u1", 5, 4, action_text="click [4]", url="http://shop.test/cart")]  # orphan: no parent URL
    lines = format_run(StoredRun(run=run_record("u1"), nodes=nodes)).splitlines()
    assert "#0 (start) http://shop.test/  open" in lines
    assert "└── #1 click [7] → http://shop.test/orders  open" in lines
    assert "    └── #2 scroll [down]  open" in lines
    assert "        └── #3 click [9]  open" in lines
    assert "#5 click [4]  open" in lines


def fail_audit_writes(monkeypatch: pytest.MonkeyPatch, failures: int) -> None:
    """The store's next `failures` audit writes fail, as with a database another process holds locked too long."""
    write = RunStore.add_audit
    left = [failures]

    def flaky(store: RunStore, record: AuditRecord) -> None:
        if left[0] > 0:
            left[0] -= 1
            raise sqlite3.OperationalError("database is locked")
        write(store, record)

    monkeypatch.setattr(RunStore, "add_audit", flaky)


def audit_record(run_id: str, n: int) -> AuditRecord:
    return AuditRecord(run_id=run_id, kind="asked", action_text=f"click [{n}]")


def test_a_write_that_fails_is_tried_again_and_nothing_is_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def main(store: RunStore) -> None:
        writer = RunWriter(store, "w1", retry_delays_seconds=(0.01, 0.01))
        await writer.start(run_record("w1"))
        for n in range(6):
            await writer.audit(audit_record("w1", n))
        await writer.finish("finished", "done")

    fail_audit_writes(monkeypatch, 2)
    with RunStore(default_store_path(tmp_path)) as store:
        asyncio.run(main(store))
        stored, audit = store.load_run("w1"), store.audit_log("w1")
    # Two failures in a row were absorbed by the retries: all six records and the finish are there.
    assert sorted(a.action_text for a in audit) == [f"click [{n}]" for n in range(6)]
    assert stored.run.status == "finished"


def test_a_write_that_keeps_failing_stops_every_later_write_with_the_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def main(store: RunStore) -> list[str]:
        writer = RunWriter(store, "w2", retry_delays_seconds=(0.01, 0.01))
        await writer.start(run_record("w2"))
        refused = []
        for n in range(3):
            with pytest.raises(RecordLost) as lost:
                await writer.audit(audit_record("w2", n))
            refused.append(str(lost.value))
        with pytest.raises(RecordLost):
            await writer.node(node("w2", 0, None))
        await writer.finish("failed", reason=refused[0])  # the end is still tried, and here it is written
        return refused

    fail_audit_writes(monkeypatch, 3)
    with RunStore(default_store_path(tmp_path)) as store:
        refused = asyncio.run(main(store))
        stored, audit = store.load_run("w2"), store.audit_log("w2")
    assert "database is locked" in refused[0] and "nothing runs unrecorded" in refused[0]
    assert refused[1] == refused[2] == refused[0]
    assert audit == [] and stored.nodes == []
    assert stored.run.status == "failed" and "could not be written" in stored.run.reason


def test_model_calls_that_cannot_be_written_do_not_keep_the_end_of_the_run_from_its_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def locked(store: RunStore, records: object) -> None:
        raise sqlite3.OperationalError("database is locked")

    async def main(store: RunStore) -> None:
        writer = RunWriter(store, "w3", retry_delays_seconds=(0.01,))
        await writer.start(run_record("w3"))
        await writer.finish("finished", "42", calls=[ModelCallRecord(run_id="w3", role="policy", replies=["x"])])

    monkeypatch.setattr(RunStore, "add_model_calls", locked)
    with RunStore(default_store_path(tmp_path)) as store:
        asyncio.run(main(store))
        assert (store.load_run("w3").run.status, store.load_run("w3").run.answer) == ("finished", "42")
        assert store.model_calls("w3") == []


def test_the_store_and_its_folder_are_private_to_the_user(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with RunStore(default_store_path(data)) as store:
        store.start_run(run_record("p1"))
        store.upsert_node(node("p1", 0, None, observation_text="Balance: $1,204.17"))
        files = [p for p in data.iterdir() if p.name.startswith(default_store_path(data).name)]
        modes = {p.name: p.stat().st_mode & 0o777 for p in files}
    # The pages of logged-in sites are in there: no one else on the machine may read them (WAL files included).
    assert data.stat().st_mode & 0o777 == 0o700
    assert len(modes) >= 2 and set(modes.values()) == {0o600}, modes


def test_a_store_left_readable_by_an_older_version_is_made_private(tmp_path: Path) -> None:
    path = default_store_path(tmp_path)
    RunStore(path).close()
    path.chmod(0o644)
    with RunStore(path):
        pass
    assert path.stat().st_mode & 0o777 == 0o600


SEND_AND_CRASH = """
    import os, signal, sys
    from pathlib import Path
    from branchwise.store import AuditRecord, NodeRecord, RunRecord, RunStore
    store = RunStore(Path(sys.argv[1]))
    store.start_run(RunRecord(run_id="crashed", task="t"))
    store.upsert_node(NodeRecord(run_id="crashed", node_id=0, url="http://shop/cart"))
    for kind, text in (("action_sent", "click [3]"), ("action_result", "click [3]"), ("action_sent", "click [12]")):
        store.add_audit(AuditRecord(run_id="crashed", kind=kind, node_id=0, action_text=text,
                                    action_class="destructive", url="http://shop/cart"))
        if sys.argv[2] == "finished" and text == "click [12]":
            store.add_audit(AuditRecord(run_id="crashed", kind="action_result", node_id=0, action_text=text))
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("last", ["in flight", "finished"])
def test_an_action_in_flight_at_a_crash_is_reported_as_of_unknown_outcome(tmp_path: Path, last: str) -> None:
    path = default_store_path(tmp_path)
    assert run_python(SEND_AND_CRASH, str(path), last).returncode == -9
    with RunStore(path) as store:
        assert store.mark_interrupted() == 1
        stored = store.load_run("crashed")
    shown = format_run(stored)
    if last == "finished":
        assert stored.unfinished_action is None and "Unknown:" not in shown
        assert stored.run.reason == "the backend stopped before the run finished"
        return
    assert stored.unfinished_action is not None and stored.unfinished_action.action_text == "click [12]"
    assert "`click [12]` had been sent to the page and its outcome is unknown" in stored.run.reason
    assert "Unknown:   `click [12]` was sent to http://shop/cart at" in shown
    assert "Resume:    branchwise resume crashed" in shown


def test_an_interrupted_run_keeps_its_position_and_only_it_can_be_reopened(tmp_path: Path) -> None:
    path = default_store_path(tmp_path)
    assert run_python(SEND_AND_CRASH, str(path), "in flight").returncode == -9
    with RunStore(path) as store:
        store.set_position("crashed", 41, 0)
        with pytest.raises(RunNotFound, match="not interrupted"):
            store.reopen_run("crashed")  # still `running` until a backend marks it: its owner may be alive
        store.mark_interrupted()
        store.start_run(run_record("other"))
        with pytest.raises(RunNotFound, match="only an interrupted run can be resumed"):
            store.reopen_run("other")
        store.reopen_run("crashed")
        run = store.load_run("crashed").run
        assert (run.status, run.reason, run.finished_at) == ("running", "", None)
        assert (run.tab_id, run.current_node) == (41, 0)
        # Reopened by this (live) process: a later backend leaves it alone.
        assert store.mark_interrupted() == 0


def test_processes_opening_a_new_store_at_once_migrate_it_once(tmp_path: Path) -> None:
    """A benchmark polling the store its child backend is creating: both migrate, one after the other."""

    def open_it(path: Path, opened: threading.Barrier) -> bool:
        opened.wait()
        with RunStore(path) as store:
            return store.list_runs() == []

    for attempt in range(5):
        path, opened = tmp_path / f"runs-{attempt}.sqlite3", threading.Barrier(6)
        with ThreadPoolExecutor(6) as pool:
            assert all(pool.map(lambda _: open_it(path, opened), range(6)))  # noqa: B023 - used before the loop moves on


def test_demonstrations_are_kept_by_site_newest_first_and_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    steps = [DemoStep(url="https://shop.example/", observation_text="[1] link 'Books'", thought="Books are linked",
                      action_text="click [1]"),
             DemoStep(url="https://shop.example/books", action_text="stop [Books listed]")]
    with RunStore(path) as store:
        first = store.add_demonstration(DemonstrationRecord(site="shop.example", instruction="Open the books",
                                                            steps=steps, score=5, persona="a reader"))
        second = store.add_demonstration(DemonstrationRecord(site="shop.example", instruction="Find the cart",
                                                             steps=steps[:1], score=4))
        store.add_demonstration(DemonstrationRecord(site="forum.example", instruction="Read a post", steps=steps,
                                                    score=4))
    with RunStore(path) as store:
        shop = store.demonstrations("shop.example")
        assert [d.demo_id for d in shop] == [second, first]
        assert shop[1].steps == steps and shop[1].persona == "a reader" and shop[1].created_at
        assert store.demo_sites() == {"forum.example": 1, "shop.example": 2}
        assert len(store.demonstrations()) == 3 and store.demonstrations("shop.example", limit=1)[0].demo_id == second
        assert store.demonstrations("nowhere.example") == []


def test_model_calls_are_kept_in_order_apart_from_the_run_and_found_by_prefix(store: RunStore) -> None:
    store.start_run(run_record("r1abc"))
    store.start_run(run_record("r2", started_at=T0 + timedelta(seconds=1)))
    value = ModelCallRecord(run_id="r1abc", role="value", asked="You judge the progress of a web agent", seconds=41.5,
                            usage=Usage(calls=2, prompt_tokens=5200, completion_tokens=90, cached_prompt_tokens=4100),
                            replies=["Thoughts: the page shows 10.\nStatus: success", "Status: failure — «no»"],
                            created_at=T0)
    policy = ModelCallRecord(run_id="r1abc", role="policy", seconds=3.0, replies=["```stop [10]```"], created_at=T0,
                             prompt="[system]\nYou are an autonomous intelligent agent\n\n[user]\nOBSERVATION: …")
    store.add_model_calls([value, policy])
    store.add_model_calls([policy.model_copy(update={"run_id": "r2"})])
    assert store.model_calls("r1") == [value, policy]
    assert store.model_calls("r2") == [policy.model_copy(update={"run_id": "r2"})]
    assert "model_calls" not in StoredRun.model_fields  # load_run stays small
    with pytest.raises(RunNotFound):
        store.model_calls("nope")


def test_a_secret_learnt_later_is_scrubbed_from_stored_replies_and_prompts(store: RunStore) -> None:
    store.start_run(run_record("r1"))
    store.add_model_calls([ModelCallRecord(run_id="r1", role="policy", replies=["the PIN is 4821"],
                                           prompt="[user]\nThe note says: PIN 4821", created_at=T0),
                           ModelCallRecord(run_id="r1", role="value", replies=["fine"], created_at=T0)])
    assert store.scrub_run("r1", lambda text: text.replace("4821", "[••••••]")) == 1
    first, second = store.model_calls("r1")
    assert (first.replies, first.prompt) == (["the PIN is [••••••]"], "[user]\nThe note says: PIN [••••••]")
    assert (second.replies, second.prompt) == (["fine"], "")


def store_at_version(path: Path, version: int) -> sqlite3.Connection:
    """A new store as version `version` made it (its user_version still to be set by the caller, once filled)."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statements in _MIGRATIONS[:version]:
        for statement in statements:
            conn.execute(statement)
    return conn


def test_a_version_4_store_keeps_its_demonstrations_by_site_without_www(tmp_path: Path) -> None:
    """Sites are kept without `www.` since version 5: what was explored at www.shop.example is found at shop.example."""
    path = tmp_path / "runs.sqlite3"
    conn = store_at_version(path, 4)
    for site in ("www.shop.example", "forum.example", "sandbox:shopping"):
        conn.execute("INSERT INTO demonstrations (site, instruction, steps, score, created_at) "
                     "VALUES (?, 'Open the books', '[]', 5, '2026-11-27T00:00:00')", (site,))
    conn.execute("PRAGMA user_version = 4")
    conn.close()
    with RunStore(path) as store:
        assert store.demo_sites() == {"forum.example": 1, "sandbox:shopping": 1, "shop.example": 1}
        assert [d.instruction for d in store.demonstrations("shop.example")] == ["Open the books"]


def test_a_version_9_stores_model_calls_are_read_without_prompts(tmp_path: Path) -> None:
    """Prompts are kept since version 10, and only with --keep-prompts: the calls before read with none."""
    path = tmp_path / "runs.sqlite3"
    conn = store_at_version(path, 9)
    conn.execute("INSERT INTO runs (run_id, task, started_at, status) VALUES ('r1', 'Find it', "
                 "'2026-11-27T00:00:00', 'finished')")
    conn.execute("INSERT INTO model_calls (run_id, role, asked, seconds, usage, replies, created_at) VALUES "
                 "('r1', 'policy', 'You are an autonomous intelligent agent', 2.5, '{}', '[\"stop [10]\"]', "
                 "'2026-11-27T00:00:00')")
    conn.execute("PRAGMA user_version = 9")
    conn.close()
    with RunStore(path) as store:
        [call] = store.model_calls("r1")
        assert (call.replies, call.prompt) == (["stop [10]"], "")
