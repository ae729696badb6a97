"""The safety audit log: a store from before it gains the table and keeps its runs, events round-trip in UTC and come
back in time order, a decision lands on its verdict so `show` lists each action once, and `branchwise audit` prints
the log."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from branchwise.cli import main
from branchwise.core.budget import Limits
from branchwise.store import (
    SCHEMA_VERSION,
    AuditRecord,
    ClassificationRecord,
    RunNotFound,
    RunRecord,
    RunStore,
    default_store_path,
    format_audit,
    format_run,
)
from branchwise.store.sqlite import _MIGRATIONS

T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
PLACE = "click [15]"
REASONS = ["clicks the button 'Place order'", "submits a POST form"]


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def start(store: RunStore, run_id: str, started: datetime = T0) -> None:
    store.start_run(RunRecord(run_id=run_id, task="Buy the red mug", strategy="best_first", started_at=started))


def place_order_events(run_id: str) -> list[AuditRecord]:
    """A destructive action classified, asked about, approved at the terminal, and its request let through."""
    shown: dict[str, Any] = {"node_id": 1, "action_text": PLACE, "action_class": "destructive",
                             "url": "http://shop.test/checkout", "element": "button 'Place order'"}
    return [
        AuditRecord(run_id=run_id, kind="classified", created_at=at(1), reasons=REASONS, **shown),
        AuditRecord(run_id=run_id, kind="asked", created_at=at(2), reasons=REASONS, approval_id="a-1",
                    nonce="n-1", **shown),
        AuditRecord(run_id=run_id, kind="decided", created_at=at(9), decision="approved",
                    decided_by="user (terminal)", note="y", approval_id="a-1", nonce="n-1", **shown),
        AuditRecord(run_id=run_id, kind="request_released", created_at=at(10), request_method="POST",
                    request_url="http://shop.test/order", action_text=PLACE, url="http://shop.test/checkout",
                    decision="approved", decided_by="user (terminal)"),
    ]


def v1_store(path: Path) -> None:
    """A store as branchwise wrote it before the audit log: schema version 1, one run with a decided verdict."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in _MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("INSERT INTO runs (run_id, task, started_at, status) VALUES ('old1', 'an old task', ?, 'finished')",
                 (T0.isoformat(timespec="microseconds"),))
    conn.execute("INSERT INTO nodes (run_id, node_id, depth, url, title, action_text, thought, status, "
                 "observation_text, created_at) VALUES ('old1', 0, 0, 'http://shop.test/', '', '', '', 'expanded', "
                 "'', ?)", (T0.isoformat(timespec="microseconds"),))
    # Before decisions were put on their verdict, an approved action had two rows.
    conn.execute("INSERT INTO classifications (run_id, node_id, action_text, action_class, reasons) "
                 "VALUES ('old1', 1, ?, 'destructive', ?)", (PLACE, json.dumps(REASONS)))
    conn.execute("INSERT INTO classifications (run_id, node_id, action_text, action_class, reasons, decision, "
                 "decided_by) VALUES ('old1', 1, ?, 'destructive', ?, 'approved', 'user (terminal)')",
                 (PLACE, json.dumps(REASONS)))
    conn.execute("PRAGMA user_version = 1")
    conn.close()


def test_a_version_1_store_gains_the_audit_table_and_keeps_its_runs(tmp_path: Path) -> None:
    path = default_store_path(tmp_path)
    v1_store(path)
    assert SCHEMA_VERSION == 10
    with RunStore(path) as store:
        old = store.load_run("old")
        # Version 10 only adds prompts to model calls (test_store). Version 9: an old run did not record how it
        # planned, so a resume goes on as the resuming command says.
        assert (old.run.profile, old.run.temperature, old.run.examples) == ("", None, False)
        assert (old.run.max_steps, old.run.limits) == (None, Limits())
        # Version 8: an old node has no note.
        assert [(n.node_id, n.status, n.note) for n in old.nodes] == [(0, "expanded", "")]
        # Version 7: an old run kept no model calls.
        assert store.model_calls("old") == []
        assert (old.run.task, old.run.status) == ("an old task", "finished")
        # Version 3: an old run has no recorded position.
        assert (old.run.tab_id, old.run.current_node) == (None, None)
        assert store.audit_log("old1") == []
        store.add_audit(AuditRecord(run_id="old1", kind="post_check", created_at=at(5), note="page unchanged"))
        assert [e.kind for e in store.audit_log("old1")] == ["post_check"]
        # The two rows an old store holds for one decision are still listed once.
        assert format_run(old).count(PLACE) == 1
        assert f"  #1 {PLACE}: approved by user (terminal)" in format_run(old)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")} >= {
        "audit_run", "audit_time"}
    conn.close()


def test_audit_records_round_trip_in_utc(tmp_path: Path) -> None:
    events = place_order_events("r1")
    with RunStore(default_store_path(tmp_path)) as store:
        start(store, "r1")
        for event in events:
            store.add_audit(event)
        # Times from elsewhere come back in UTC; naive ones are taken as UTC.
        store.add_audit(AuditRecord(run_id="r1", kind="request_held", created_at=datetime(
            2025, 3, 1, 14, 0, 11, tzinfo=timezone(timedelta(hours=2))), request_method="DELETE",
            request_url="http://shop.test/cart/3"))
        store.add_audit(AuditRecord(run_id="r1", kind="request_failed", created_at=datetime(2025, 3, 1, 12, 0, 12),
                                    request_method="PUT", request_url="http://shop.test/a", note="net::ERR_FAILED"))
        loaded = store.audit_log("r1")
    assert [e.model_copy(update={"seq": None}) for e in loaded[:4]] == events
    assert [e.seq for e in loaded] == sorted(e.seq for e in loaded if e.seq is not None)
    assert loaded[4].created_at == at(11) - timedelta(microseconds=123456) and loaded[4].created_at.tzinfo is not None
    assert loaded[5].created_at == datetime(2025, 3, 1, 12, 0, 12, tzinfo=UTC)
    assert all(e.created_at.utcoffset() == timedelta(0) for e in loaded)


def test_audit_log_is_in_time_order_per_run_and_across_runs(tmp_path: Path) -> None:
    with RunStore(default_store_path(tmp_path)) as store:
        start(store, "aaa111")
        start(store, "bbb222", at(1))
        # Written out of order (a gate's event may be stamped before a slower writer's): read back by time.
        store.add_audit(AuditRecord(run_id="aaa111", kind="decided", created_at=at(3), decision="denied",
                                    decided_by="policy"))
        store.add_audit(AuditRecord(run_id="bbb222", kind="classified", created_at=at(2), action_text="click [1]",
                                    action_class="safe"))
        store.add_audit(AuditRecord(run_id="aaa111", kind="asked", created_at=at(1), action_text=PLACE))
        store.add_audit(AuditRecord(run_id="aaa111", kind="request_seen", created_at=at(3), request_method="POST"))

        assert [(e.kind, e.created_at) for e in store.audit_log("aaa")] == [
            ("asked", at(1)), ("decided", at(3)), ("request_seen", at(3))]  # equal times: in write order
        assert [(e.run_id, e.kind) for e in store.audit_log()] == [
            ("aaa111", "asked"), ("bbb222", "classified"), ("aaa111", "decided"), ("aaa111", "request_seen")]
        assert [e.kind for e in store.audit_log(limit=2)] == ["decided", "request_seen"], "the newest, oldest first"
        assert [e.kind for e in store.audit_log("aaa111", limit=1)] == ["request_seen"]
        with pytest.raises(RunNotFound, match="no run matches 'zzz'"):
            store.audit_log("zzz")
        with pytest.raises(sqlite3.IntegrityError):  # an event belongs to a recorded run
            store.add_audit(AuditRecord(run_id="nope", kind="asked"))


def test_a_decision_lands_on_its_verdict_so_show_lists_the_action_once(tmp_path: Path) -> None:
    verdict = ClassificationRecord(run_id="r1", node_id=1, action_text=PLACE, action_class="destructive",
                                   reasons=REASONS)
    with RunStore(default_store_path(tmp_path)) as store:
        start(store, "r1")
        store.add_classification(verdict)
        store.add_classification(verdict.model_copy(update={"node_id": 2}))  # the same action elsewhere
        store.record_decision(verdict.model_copy(update={"decision": "approved", "decided_by": "user (terminal)"}))
        # A decision without a verdict on record (asked about an action never classified here) is kept as a row.
        store.record_decision(verdict.model_copy(update={"node_id": 7, "decision": "denied", "decided_by": "policy"}))
        stored = store.load_run("r1")
    assert [(c.node_id, c.decision, c.decided_by) for c in stored.classifications] == [
        (1, "approved", "user (terminal)"), (2, None, None), (7, "denied", "policy")]
    shown = format_run(stored).split("Destructive actions:\n")[1].splitlines()
    assert shown == [
        f"  #1 {PLACE}: approved by user (terminal)", *(f"    - {r}" for r in REASONS),
        f"  #2 {PLACE}: undecided", *(f"    - {r}" for r in REASONS),
        f"  #7 {PLACE}: denied by policy", *(f"    - {r}" for r in REASONS),
    ]


def test_format_audit_of_one_run_and_across_runs() -> None:
    events = [e.model_copy(update={"seq": i}) for i, e in enumerate(place_order_events("7f3a9c2b1d40"), 1)]
    pad = " " * len("2025-03-01 12:00:01  request_released  ")
    assert format_audit(events, "7f3a9c2b1d40").splitlines() == [
        "Audit log of run 7f3a9c2b1d40 (4 entries, times in UTC):",
        f"2025-03-01 12:00:01  classified        #1 {PLACE} [destructive] on button 'Place order' at "
        "http://shop.test/checkout",
        f"{pad}why: {REASONS[0]}",
        f"{pad}why: {REASONS[1]}",
        f"2025-03-01 12:00:02  asked             #1 {PLACE} [destructive] on button 'Place order' at "
        "http://shop.test/checkout",
        f"{pad}why: {REASONS[0]}",
        f"{pad}why: {REASONS[1]}",
        f"{pad}approval: a-1",
        f"2025-03-01 12:00:09  decided           #1 {PLACE} [destructive] on button 'Place order' at "
        "http://shop.test/checkout → approved by user (terminal)",
        f"{pad}note: y",
        f"{pad}approval: a-1",
        f"2025-03-01 12:00:10  request_released  POST http://shop.test/order during `{PLACE}` at "
        "http://shop.test/checkout → approved by user (terminal)",
    ]
    across = format_audit([events[0], AuditRecord(run_id="b2", kind="request_held", created_at=at(3),
                                                   request_method="POST", request_url="http://x.test/")])
    assert across.splitlines()[0] == "Audit log, newest 2 entries across runs (times in UTC):"
    assert across.splitlines()[1].startswith(f"2025-03-01 12:00:01  7f3a9c2b1d40  classified        #1 {PLACE}")
    assert across.splitlines()[-1] == "2025-03-01 12:00:03  b2            request_held      POST http://x.test/"
    assert format_audit([], "r1") == "Run r1: no audit entries recorded."
    assert format_audit([]) == "No audit entries recorded yet."


def test_branchwise_audit_prints_a_run_every_run_or_json_lines(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    with RunStore(default_store_path(tmp_path)) as store:
        start(store, "7f3a9c2b1d40")
        start(store, "0b1c2d3e4f50", at(20))
        for event in place_order_events("7f3a9c2b1d40"):
            store.add_audit(event)
        store.add_audit(AuditRecord(run_id="0b1c2d3e4f50", kind="request_held", created_at=at(30),
                                    request_method="POST", request_url="http://shop.test/cart"))

    def audit(*args: str) -> tuple[int, str, str]:
        code = main(["audit", *args, "--data-dir", str(tmp_path)])
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = audit("7f3a")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Audit log of run 7f3a9c2b1d40 (4 entries, times in UTC):"
    assert [line.split()[2] for line in lines[1:] if line[:1].isdigit()] == [
        "classified", "asked", "decided", "request_released"]
    assert f"why: {REASONS[0]}" in out and "→ approved by user (terminal)" in out and "0b1c2d3e4f50" not in out

    code, out, _ = audit("--limit", "2")
    assert code == 0
    assert out.splitlines()[0] == "Audit log, newest 2 entries across runs (times in UTC):"
    assert "7f3a9c2b1d40  request_released" in out and "0b1c2d3e4f50  request_held" in out

    code, out, _ = audit("7f3a", "--json")
    records = [AuditRecord.model_validate_json(line) for line in out.splitlines()]
    assert [(r.kind, r.created_at) for r in records] == [("classified", at(1)), ("asked", at(2)),
                                                         ("decided", at(9)), ("request_released", at(10))]
    assert records[2].decided_by == "user (terminal)" and records[1].nonce == "n-1"

    code, out, err = audit("nope")
    assert code == 2 and out == ""
    assert "branchwise: no run matches 'nope'" in err

    empty = tmp_path / "empty"
    assert main(["audit", "--data-dir", str(empty)]) == 0
    assert capsys.readouterr().out == "No audit entries recorded yet.\n"

