"""RunStore: the planner's runs in one SQLite file, so `branchwise runs`/`show` work after the backend has exited.

Every write is its own committed transaction (autocommit, WAL, synchronous=FULL): a crash or kill of the backend
loses nothing already handed to the store. One connection is shared by all threads behind a lock; asyncio callers
use `asyncio.to_thread`, so a slow disk never blocks the event loop.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self, get_args

from ..core.budget import Limits
from ..core.status import FinalStatus, Role
from ..core.usage import Usage
from ..private import private_dir, private_file
from .records import (
    AuditRecord,
    BacktrackRecord,
    ClassificationRecord,
    DemonstrationRecord,
    DemoStep,
    ModelCallRecord,
    NodeRecord,
    RunRecord,
    RunSummary,
    StoredRun,
    TrajectoryStep,
    UsageRecord,
    ValueRecord,
    utc_now,
)

log = logging.getLogger(__name__)

SCHEMA_VERSION = 10
# How long a statement waits for another process's lock on the store.
LOCK_TIMEOUT_S = 10.0
STORE_FILENAME = "runs.sqlite3"

# Version n's statements bring a store at version n-1 up to n; a new version appends a tuple (never edit old ones).
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS runs (
            run_id TEXT PRIMARY KEY,
            task TEXT NOT NULL,
            strategy TEXT NOT NULL DEFAULT '',
            backtrack_mode TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            start_url TEXT NOT NULL DEFAULT '',
            started_at TEXT NOT NULL,
            status TEXT NOT NULL,
            answer TEXT NOT NULL DEFAULT '',
            reason TEXT NOT NULL DEFAULT '',
            finished_at TEXT,
            owner_pid INTEGER
        )""",
        "CREATE INDEX IF NOT EXISTS runs_started ON runs (started_at)",
        """CREATE TABLE IF NOT EXISTS nodes (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            node_id INTEGER NOT NULL,
            parent_id INTEGER,
            depth INTEGER NOT NULL,
            url TEXT NOT NULL,
            title TEXT NOT NULL,
            action_text TEXT NOT NULL,
            action_class TEXT,
            thought TEXT NOT NULL,
            reward REAL,
            value REAL,
            checkpoint INTEGER,
            status TEXT NOT NULL,
            answer TEXT,
            observation_text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (run_id, node_id)
        )""",
        """CREATE TABLE IF NOT EXISTS classifications (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            node_id INTEGER NOT NULL,
            action_text TEXT NOT NULL,
            action_class TEXT NOT NULL,
            reasons TEXT NOT NULL,
            decision TEXT,
            decided_by TEXT
        )""",
        "CREATE INDEX IF NOT EXISTS classifications_run ON classifications (run_id)",
        """CREATE TABLE IF NOT EXISTS node_values (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            node_id INTEGER NOT NULL,
            kind TEXT NOT NULL,
            score REAL NOT NULL,
            method TEXT NOT NULL,
            samples TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS node_values_run ON node_values (run_id)",
        """CREATE TABLE IF NOT EXISTS backtracks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            source INTEGER NOT NULL,
            target INTEGER NOT NULL,
            mode TEXT NOT NULL,
            outcome TEXT NOT NULL,
            reason TEXT NOT NULL,
            replayed_actions INTEGER NOT NULL,
            env_actions INTEGER NOT NULL,
            wall_ms REAL NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS backtracks_run ON backtracks (run_id)",
        """CREATE TABLE IF NOT EXISTS usage (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            calls INTEGER NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            retries INTEGER NOT NULL,
            PRIMARY KEY (run_id, role)
        )""",
        """CREATE TABLE IF NOT EXISTS trajectory (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            node_id INTEGER NOT NULL,
            PRIMARY KEY (run_id, position)
        )""",
    ),
    # 2: the safety audit log. Read in time order, per run or across runs.
    (
        """CREATE TABLE IF NOT EXISTS audit (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            created_at TEXT NOT NULL,
            kind TEXT NOT NULL,
            node_id INTEGER,
            action_text TEXT NOT NULL DEFAULT '',
            action_class TEXT,
            reasons TEXT NOT NULL DEFAULT '[]',
            url TEXT NOT NULL DEFAULT '',
            element TEXT NOT NULL DEFAULT '',
            decision TEXT,
            decided_by TEXT,
            note TEXT NOT NULL DEFAULT '',
            request_method TEXT NOT NULL DEFAULT '',
            request_url TEXT NOT NULL DEFAULT '',
            approval_id TEXT NOT NULL DEFAULT '',
            nonce TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX IF NOT EXISTS audit_run ON audit (run_id, created_at, id)",
        "CREATE INDEX IF NOT EXISTS audit_time ON audit (created_at, id)",
    ),
    # 3: where the run is (the working tab and the node it shows), so an interrupted run can be resumed.
    (
        "ALTER TABLE runs ADD COLUMN tab_id INTEGER",
        "ALTER TABLE runs ADD COLUMN current_node INTEGER",
    ),
    # 4: demonstrations learnt by exploring a site (branchwise explore), read by retrieval and listed by site.
    (
        """CREATE TABLE IF NOT EXISTS demonstrations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            site TEXT NOT NULL,
            instruction TEXT NOT NULL,
            steps TEXT NOT NULL,
            score REAL NOT NULL,
            persona TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS demonstrations_site ON demonstrations (site, id)",
    ),
    # 5: a site is kept without a leading `www.` (examples.site_of), so a demonstration explored at one address is
    # found by runs at the other.
    (
        "UPDATE demonstrations SET site = substr(site, 5) WHERE site LIKE 'www.%'",
    ),
    # 6: how many prompt tokens the server took from its prompt cache.
    (
        "ALTER TABLE usage ADD COLUMN cached_prompt_tokens INTEGER NOT NULL DEFAULT 0",
    ),
    # 7: every answered model call of a run, with its time and replies (`branchwise show RUN --calls`).
    (
        """CREATE TABLE IF NOT EXISTS model_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            asked TEXT NOT NULL,
            seconds REAL NOT NULL,
            usage TEXT NOT NULL,
            replies TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS model_calls_run ON model_calls (run_id)",
    ),
    # 8: why a node is dead or invalid (a refused action, a failed one, a revisit), for `branchwise show`.
    (
        "ALTER TABLE nodes ADD COLUMN note TEXT NOT NULL DEFAULT ''",
    ),
    # 9: how a run planned and what it could spend besides its strategy (profile, temperature, retrieved steps, step
    # limit, limits as JSON), for resuming it the same way.
    (
        "ALTER TABLE runs ADD COLUMN profile TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE runs ADD COLUMN temperature REAL",
        "ALTER TABLE runs ADD COLUMN examples INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE runs ADD COLUMN max_steps INTEGER",
        "ALTER TABLE runs ADD COLUMN limits TEXT NOT NULL DEFAULT '{}'",
    ),
    # 10: a model call's whole prompt, for a run that keeps prompts (`--keep-prompts`).
    (
        "ALTER TABLE model_calls ADD COLUMN prompt TEXT NOT NULL DEFAULT ''",
    ),
)

_AUDIT_COLUMNS = ("run_id", "created_at", "kind", "node_id", "action_text", "action_class", "reasons", "url", "element",
                  "decision", "decided_by", "note", "request_method", "request_url", "approval_id", "nonce")

_ROLES: tuple[str, ...] = get_args(Role)


def _audit_record(row: sqlite3.Row) -> AuditRecord:
    """An audit row as written by add_audit, with its row id as seq."""
    return AuditRecord(**{**{c: row[c] for c in _AUDIT_COLUMNS}, "seq": row["id"],
                          "created_at": _dt(row["created_at"]), "reasons": json.loads(row["reasons"])})


class RunNotFound(KeyError):
    """No run, or more than one, matches the id or prefix the user typed."""

    def __str__(self) -> str:
        # KeyError's str() repr-quotes its argument; show the message as written.
        return str(self.args[0]) if self.args else "run not found"


def default_store_path(data_dir: Path) -> Path:
    return Path(data_dir) / STORE_FILENAME


def _ts(value: datetime) -> str:
    """UTC with fixed microseconds, so text order is time order (naive datetimes are taken as UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _dt(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _dt_or_none(value: str | None) -> datetime | None:
    return None if value is None else _dt(value)


def _classification_insert(record: ClassificationRecord) -> tuple[str, tuple[Any, ...]]:
    """The statement and parameters that add one classification row."""
    return ("INSERT INTO classifications (run_id, node_id, action_text, action_class, reasons, decision, decided_by) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (record.run_id, record.node_id, record.action_text, record.action_class, json.dumps(record.reasons),
             record.decision, record.decided_by))


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name == "nt":  # signal 0 is CTRL_C_EVENT on Windows; never send it. Treat other processes as gone.
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return False
    return True


class RunStore:
    """Runs, nodes, classifications, values, backtracks, usage and trajectories of the tree-search planner, and the
    safety audit log of every run."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path) if str(path) != ":memory:" else None
        if self.path is not None:
            # SQLite gives the -wal and -shm files the database file's mode: 0600 for all three.
            private_file(private_dir(self.path.parent) / self.path.name)
        self._lock = threading.Lock()
        # Autocommit (isolation_level=None): each statement commits at once; multi-statement writes use _transaction.
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None,
                                     timeout=LOCK_TIMEOUT_S)
        self._conn.row_factory = sqlite3.Row
        with self._lock:
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._journal_wal()
            self._conn.execute("PRAGMA synchronous = FULL")
            self._migrate()

    @classmethod
    def open(cls, path: Path | str) -> Self:
        return cls(path)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------------------------------

    def _journal_wal(self) -> None:
        """WAL mode; a new store another process is setting up at this moment answers "locked" at once (SQLite waits
        for no busy handler here), so it is asked again for as long as a write would wait."""
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _version(self) -> int:
        version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise RuntimeError(f"run store {self.path} has schema version {version}; this branchwise knows "
                               f"{SCHEMA_VERSION}. Upgrade branchwise or use another data dir.")
        return version

    def _migrate(self) -> None:
        if self._version() == SCHEMA_VERSION:
            return
        # One transaction under the write lock, the version read again inside it: another process opening the same
        # new store (a backend and `branchwise runs`, a benchmark and its child) may have migrated it meanwhile.
        with self._transaction():
            start = self._version()
            for target in range(start + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[target - 1]:
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA user_version = {target}")
                log.info("run store %s migrated to schema version %d", self.path or ":memory:", target)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """Several statements that must land together (callers hold the lock)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _write(self, sql: str, params: Sequence[Any] | dict[str, Any]) -> int:
        with self._lock:
            return self._conn.execute(sql, params).rowcount

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _resolve(self, run_id_or_prefix: str) -> str:
        """The one run id that equals or starts with the text given (callers hold the lock)."""
        text = run_id_or_prefix.strip()
        if not text:
            raise RunNotFound("no run id given")
        if self._conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (text,)).fetchone():
            return text
        pattern = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._conn.execute("SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\' "
                                  "ORDER BY started_at DESC, run_id LIMIT 6", (pattern,)).fetchall()
        if not rows:
            raise RunNotFound(f"no run matches {text!r}; `branchwise runs` lists the recorded runs")
        if len(rows) > 1:
            shown = ", ".join(r["run_id"] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
            raise RunNotFound(f"{text!r} matches several runs ({shown}); type more of the id")
        return str(rows[0]["run_id"])

    # -- writes ------------------------------------------------------------------------------------------------

    def start_run(self, run: RunRecord) -> None:
        """Record a new run; the owning process id lets mark_interrupted tell live runs from dead ones."""
        try:
            self._write(
                "INSERT INTO runs (run_id, task, strategy, backtrack_mode, profile, temperature, examples, max_steps, "
                "limits, model, start_url, started_at, status, answer, reason, finished_at, owner_pid, tab_id, "
                "current_node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run.run_id, run.task, run.strategy, run.backtrack_mode, run.profile, run.temperature,
                 int(run.examples), run.max_steps, run.limits.model_dump_json(exclude_none=True), run.model,
                 run.start_url, _ts(run.started_at), run.status, run.answer, run.reason,
                 _ts(run.finished_at) if run.finished_at else None, os.getpid(), run.tab_id, run.current_node))
        except sqlite3.IntegrityError as e:
            raise ValueError(f"run {run.run_id} is already recorded") from e

    def finish_run(self, run_id: str, status: FinalStatus, answer: str = "", reason: str = "",
                   finished_at: datetime | None = None) -> None:
        """The run's end. An interrupted run's reason names the action it had under way, if any (`_interrupted`)."""
        if status not in get_args(FinalStatus):  # a runtime guard: callers may pass plain strings
            raise ValueError(f"finish_run needs one of {get_args(FinalStatus)}, not {status!r}")
        with self._lock:
            if status == "interrupted":
                reason = self._interrupted(run_id, reason)
            changed = self._conn.execute(
                "UPDATE runs SET status = ?, answer = ?, reason = ?, finished_at = ? WHERE run_id = ?",
                (status, answer, reason, _ts(finished_at or utc_now()), run_id)).rowcount
        if not changed:
            raise RunNotFound(f"no run {run_id!r} to finish")

    def upsert_node(self, node: NodeRecord) -> None:
        """Insert or update a node; created_at keeps its first value and an empty observation keeps the stored one,
        so value/checkpoint/status updates need not resend the page text."""
        self._write(
            """INSERT INTO nodes (run_id, node_id, parent_id, depth, url, title, action_text, action_class, thought,
                   reward, value, checkpoint, status, note, answer, observation_text, created_at)
               VALUES (:run_id, :node_id, :parent_id, :depth, :url, :title, :action_text, :action_class, :thought,
                   :reward, :value, :checkpoint, :status, :note, :answer, :observation_text, :created_at)
               ON CONFLICT (run_id, node_id) DO UPDATE SET
                   parent_id = excluded.parent_id, depth = excluded.depth, url = excluded.url,
                   title = excluded.title, action_text = excluded.action_text, action_class = excluded.action_class,
                   thought = excluded.thought, reward = excluded.reward, value = excluded.value,
                   checkpoint = excluded.checkpoint, status = excluded.status, note = excluded.note,
                   answer = excluded.answer,
                   observation_text = CASE WHEN excluded.observation_text = '' THEN nodes.observation_text
                                           ELSE excluded.observation_text END""",
            {**node.model_dump(exclude={"created_at", "checkpoint"}), "created_at": _ts(node.created_at),
             "checkpoint": None if node.checkpoint is None else int(node.checkpoint)})

    def add_classification(self, record: ClassificationRecord) -> None:
        self._write(*_classification_insert(record))

    def record_decision(self, record: ClassificationRecord) -> None:
        """Put the user's decision on the verdict it answers (the newest undecided row of that action at that node),
        so each classified action is one row; inserts the record when there is no such row."""
        with self._lock, self._transaction():
            changed = self._conn.execute(
                "UPDATE classifications SET decision = ?, decided_by = ? WHERE id = (SELECT id FROM classifications "
                "WHERE run_id = ? AND node_id = ? AND action_text = ? AND decision IS NULL ORDER BY id DESC LIMIT 1)",
                (record.decision, record.decided_by, record.run_id, record.node_id, record.action_text)).rowcount
            if not changed:
                self._conn.execute(*_classification_insert(record))

    def add_audit(self, record: AuditRecord) -> None:
        """Append one audit event; its seq is the row id the store gives it."""
        values = {**record.model_dump(include=set(_AUDIT_COLUMNS)), "created_at": _ts(record.created_at),
                  "reasons": json.dumps(record.reasons)}
        self._write(f"INSERT INTO audit ({', '.join(_AUDIT_COLUMNS)}) "
                    f"VALUES ({', '.join(':' + c for c in _AUDIT_COLUMNS)})", values)

    def add_value(self, record: ValueRecord) -> None:
        self._write("INSERT INTO node_values (run_id, node_id, kind, score, method, samples) VALUES (?, ?, ?, ?, ?, ?)",
                    (record.run_id, record.node_id, record.kind, record.score, record.method,
                     json.dumps(record.samples)))

    def add_demonstration(self, record: DemonstrationRecord) -> int:
        """Store a demonstration; returns its id."""
        with self._lock:
            cursor = self._conn.execute(
                "INSERT INTO demonstrations (site, instruction, steps, score, persona, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (record.site, record.instruction, json.dumps([step.model_dump() for step in record.steps]),
                 record.score, record.persona, _ts(record.created_at)))
            return int(cursor.lastrowid or 0)

    def demonstrations(self, site: str | None = None, limit: int | None = None) -> list[DemonstrationRecord]:
        """A site's demonstrations (every site's without one), newest first."""
        where, params = ("WHERE site = ?", [site]) if site is not None else ("", [])
        rows = self._read(f"SELECT * FROM demonstrations {where} ORDER BY id DESC LIMIT ?",
                          [*params, -1 if limit is None else max(limit, 0)])
        return [DemonstrationRecord(demo_id=r["id"], site=r["site"], instruction=r["instruction"],
                                    steps=[DemoStep.model_validate(step) for step in json.loads(r["steps"])],
                                    score=r["score"], persona=r["persona"], created_at=_dt(r["created_at"]))
                for r in rows]

    def demo_sites(self) -> dict[str, int]:
        """Every site with demonstrations, and how many."""
        rows = self._read("SELECT site, COUNT(*) AS n FROM demonstrations GROUP BY site ORDER BY site")
        return {r["site"]: r["n"] for r in rows}

    def add_model_calls(self, records: Sequence[ModelCallRecord]) -> None:
        """Append model calls, in one transaction."""
        with self._lock, self._transaction():
            self._conn.executemany(
                "INSERT INTO model_calls (run_id, role, asked, seconds, usage, replies, created_at, prompt) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.run_id, r.role, r.asked, r.seconds, r.usage.model_dump_json(), json.dumps(r.replies),
                  _ts(r.created_at), r.prompt) for r in records])

    def scrub_run(self, run_id: str, scrub: Callable[[str], str], ended: bool = False) -> int:
        """Pass the run's stored actions, thoughts, answers, notes, model replies and prompts through `scrub` again,
        for the secrets the run learnt after they were written (a password the model wrote down a step before it typed
        it, or a stop's answer proposed before a sibling candidate typed one); returns how many rows changed. Once the
        run has `ended`, the actions its classifications and audit log name too (while it goes on, a decision finds
        its verdict, and a resume the action in flight, by that text)."""
        with self._lock, self._transaction():
            changed = 0
            if ended:
                for table in ("classifications", "audit"):
                    found = self._conn.execute(f"SELECT id, action_text FROM {table} WHERE run_id = ?", (run_id,))
                    pairs = [(scrub(r["action_text"]), r["action_text"], r["id"]) for r in found if r["action_text"]]
                    rows = [(text, row_id) for text, stored, row_id in pairs if text != stored]
                    self._conn.executemany(f"UPDATE {table} SET action_text = ? WHERE id = ?", rows)
                    changed += len(rows)
            nodes = []
            for row in self._conn.execute("SELECT node_id, action_text, thought, answer, note FROM nodes "
                                          "WHERE run_id = ?", (run_id,)):
                stored = (row["action_text"], row["thought"], row["answer"], row["note"])
                texts = tuple(scrub(text) if text else text for text in stored)
                if texts != stored:
                    nodes.append((*texts, run_id, row["node_id"]))
            self._conn.executemany("UPDATE nodes SET action_text = ?, thought = ?, answer = ?, note = ? "
                                   "WHERE run_id = ? AND node_id = ?", nodes)
            calls = []
            for row in self._conn.execute("SELECT id, replies, prompt FROM model_calls WHERE run_id = ?", (run_id,)):
                replies = json.loads(row["replies"])
                scrubbed = [scrub(reply) for reply in replies]
                prompt = scrub(row["prompt"]) if row["prompt"] else ""
                if scrubbed != replies or prompt != row["prompt"]:
                    calls.append((json.dumps(scrubbed), prompt, row["id"]))
            self._conn.executemany("UPDATE model_calls SET replies = ?, prompt = ? WHERE id = ?", calls)
        return changed + len(nodes) + len(calls)

    def model_calls(self, run_id_or_prefix: str) -> list[ModelCallRecord]:
        """A run's model calls in the order they were answered (kept apart from load_run: they are long)."""
        with self._lock:
            run_id = self._resolve(run_id_or_prefix)
            rows = self._conn.execute("SELECT * FROM model_calls WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()
        return [ModelCallRecord(run_id=r["run_id"], role=r["role"], asked=r["asked"], seconds=r["seconds"],
                                usage=Usage.model_validate_json(r["usage"]), replies=json.loads(r["replies"]),
                                created_at=_dt(r["created_at"]), prompt=r["prompt"]) for r in rows]

    def add_backtrack(self, record: BacktrackRecord) -> None:
        self._write("INSERT INTO backtracks (run_id, source, target, mode, outcome, reason, replayed_actions, "
                    "env_actions, wall_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.run_id, record.source, record.target, record.mode, record.outcome, record.reason,
                     record.replayed_actions, record.env_actions, record.wall_ms, _ts(record.created_at)))

    def set_usage(self, record: UsageRecord) -> None:
        """Replace the role's totals (callers hand over running totals, not increments)."""
        self._write("INSERT INTO usage (run_id, role, calls, prompt_tokens, completion_tokens, retries, "
                    "cached_prompt_tokens) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, role) DO UPDATE SET "
                    "calls = excluded.calls, prompt_tokens = excluded.prompt_tokens, "
                    "completion_tokens = excluded.completion_tokens, retries = excluded.retries, "
                    "cached_prompt_tokens = excluded.cached_prompt_tokens",
                    (record.run_id, record.role, record.calls, record.prompt_tokens, record.completion_tokens,
                     record.retries, record.cached_prompt_tokens))

    def set_trajectory(self, run_id: str, node_ids: Sequence[int]) -> None:
        """Replace the chosen trajectory in one transaction, so a reader never sees half of it."""
        with self._lock, self._transaction():
            self._conn.execute("DELETE FROM trajectory WHERE run_id = ?", (run_id,))
            self._conn.executemany("INSERT INTO trajectory (run_id, position, node_id) VALUES (?, ?, ?)",
                                   [(run_id, i, node_id) for i, node_id in enumerate(node_ids)])

    def set_position(self, run_id: str, tab_id: int, node_id: int | None) -> None:
        """The working tab and the node it shows, kept up to date while the run works (what resume starts from)."""
        self._write("UPDATE runs SET tab_id = ?, current_node = ? WHERE run_id = ?", (tab_id, node_id, run_id))

    def reopen_run(self, run_id: str) -> None:
        """An interrupted run goes on (resume): running again, owned by this process; RunNotFound unless it was
        interrupted."""
        changed = self._write("UPDATE runs SET status = 'running', reason = '', finished_at = NULL, owner_pid = ? "
                              "WHERE run_id = ? AND status = 'interrupted'", (os.getpid(), run_id))
        if not changed:
            raise RunNotFound(f"run {run_id!r} is not interrupted; only an interrupted run can be resumed")

    def mark_interrupted(self) -> int:
        """Runs left 'running' by a process that no longer exists become 'interrupted'; returns how many.

        Runs of live processes (another `branchwise` sharing the data dir, or this one) are left alone.
        """
        rows = self._read("SELECT run_id, owner_pid FROM runs WHERE status = 'running'")
        dead = [r["run_id"] for r in rows if r["owner_pid"] is None or not _pid_alive(int(r["owner_pid"]))]
        if not dead:
            return 0
        now = _ts(utc_now())
        with self._lock, self._transaction():
            for run_id in dead:
                reason = self._interrupted(run_id, "the backend stopped before the run finished")
                self._conn.execute(
                    "UPDATE runs SET status = 'interrupted', finished_at = ?, reason = CASE WHEN reason = '' "
                    "THEN ? ELSE reason END WHERE run_id = ? AND status = 'running'", (now, reason, run_id))
        log.info("marked %d unfinished run(s) as interrupted: %s", len(dead), ", ".join(dead))
        return len(dead)

    # -- reads -------------------------------------------------------------------------------------------------

    def list_runs(self, limit: int = 50) -> list[RunSummary]:
        """Newest first, with counts; never reads observation text."""
        rows = self._read(
            """SELECT r.run_id, r.task, r.strategy, r.status, r.started_at, r.finished_at, r.answer,
                   (SELECT COUNT(*) FROM nodes n WHERE n.run_id = r.run_id) AS node_count,
                   (SELECT COUNT(*) FROM backtracks b WHERE b.run_id = r.run_id AND b.outcome = 'committed')
                       AS committed,
                   (SELECT COUNT(*) FROM backtracks b WHERE b.run_id = r.run_id AND b.outcome = 'aborted')
                       AS aborted
               FROM runs r ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?""", (limit,))
        return [RunSummary(run_id=r["run_id"], task=r["task"], strategy=r["strategy"], status=r["status"],
                           started_at=_dt(r["started_at"]), finished_at=_dt_or_none(r["finished_at"]),
                           nodes=r["node_count"], backtracks_committed=r["committed"],
                           backtracks_aborted=r["aborted"], answer=r["answer"]) for r in rows]

    def finished_trajectories(self, runs: int = 100, exclude_run: str | None = None) -> list[TrajectoryStep]:
        """The chosen path of the newest finished runs, one row per step: the page it was taken on and what was done.
        Oldest run first, steps in order; what retrieval of past examples reads. Exploration episodes are left out:
        what they taught is in their demonstrations."""
        rows = self._read(
            """SELECT r.run_id, r.task, t.position, parent.url, parent.observation_text, child.thought,
                      child.action_text
               FROM (SELECT run_id, task, started_at, rowid AS seq FROM runs
                     WHERE status = 'finished' AND run_id != ? AND strategy != 'explore'
                     ORDER BY started_at DESC, rowid DESC LIMIT ?) r
               JOIN trajectory t ON t.run_id = r.run_id AND t.position > 0
               JOIN trajectory tp ON tp.run_id = r.run_id AND tp.position = t.position - 1
               JOIN nodes child ON child.run_id = r.run_id AND child.node_id = t.node_id
               JOIN nodes parent ON parent.run_id = r.run_id AND parent.node_id = tp.node_id
               ORDER BY r.started_at, r.seq, t.position""", (exclude_run or "", runs))
        return [TrajectoryStep(run_id=r["run_id"], task=r["task"], position=r["position"], url=r["url"],
                               observation_text=r["observation_text"], thought=r["thought"],
                               action_text=r["action_text"]) for r in rows]

    def resolve_run(self, run_id_or_prefix: str) -> str:
        """The full id of the one run that equals or starts with the text; RunNotFound if none or several match."""
        with self._lock:
            return self._resolve(run_id_or_prefix)

    def audit_log(self, run_id_or_prefix: str | None = None, limit: int | None = None) -> list[AuditRecord]:
        """One run's audit events (by id or unique prefix), or every run's; in time order. With a limit, the newest
        `limit` events, still oldest first."""
        with self._lock:
            where, params = "", []
            if run_id_or_prefix is not None:
                where, params = "WHERE run_id = ?", [self._resolve(run_id_or_prefix)]
            # Newest first to apply the limit, then turned around: a log reads top to bottom.
            rows = self._conn.execute(f"SELECT * FROM audit {where} ORDER BY created_at DESC, id DESC LIMIT ?",
                                      [*params, -1 if limit is None else max(limit, 0)]).fetchall()
        return [_audit_record(r) for r in reversed(rows)]

    def load_run(self, run_id_or_prefix: str) -> StoredRun:
        """Everything about one run, by full id or unique prefix; RunNotFound if none or several match."""
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot even while another process writes
            try:
                run_id = self._resolve(run_id_or_prefix)
                return self._load(run_id)
            finally:
                self._conn.execute("COMMIT")

    def _load(self, run_id: str) -> StoredRun:
        def rows(sql: str) -> list[sqlite3.Row]:
            return self._conn.execute(sql, (run_id,)).fetchall()

        r = rows("SELECT * FROM runs WHERE run_id = ?")[0]
        run = RunRecord(run_id=r["run_id"], task=r["task"], strategy=r["strategy"],
                        backtrack_mode=r["backtrack_mode"], profile=r["profile"], temperature=r["temperature"],
                        examples=bool(r["examples"]), max_steps=r["max_steps"],
                        limits=Limits.model_validate_json(r["limits"]), model=r["model"], start_url=r["start_url"],
                        started_at=_dt(r["started_at"]), status=r["status"], answer=r["answer"],
                        reason=r["reason"], finished_at=_dt_or_none(r["finished_at"]), tab_id=r["tab_id"],
                        current_node=r["current_node"])
        nodes = [NodeRecord(**{**dict(n), "checkpoint": None if n["checkpoint"] is None else bool(n["checkpoint"]),
                               "created_at": _dt(n["created_at"])})
                 for n in rows("SELECT * FROM nodes WHERE run_id = ? ORDER BY node_id")]
        classifications = [
            ClassificationRecord(run_id=c["run_id"], node_id=c["node_id"], action_text=c["action_text"],
                                 action_class=c["action_class"], reasons=json.loads(c["reasons"]),
                                 decision=c["decision"], decided_by=c["decided_by"])
            for c in rows("SELECT * FROM classifications WHERE run_id = ? ORDER BY id")]
        values = [ValueRecord(run_id=v["run_id"], node_id=v["node_id"], kind=v["kind"], score=v["score"],
                              method=v["method"], samples=json.loads(v["samples"]))
                  for v in rows("SELECT * FROM node_values WHERE run_id = ? ORDER BY id")]
        backtracks = [BacktrackRecord(**{**{k: b[k] for k in b.keys() if k != "id"},
                                         "created_at": _dt(b["created_at"])})
                      for b in rows("SELECT * FROM backtracks WHERE run_id = ? ORDER BY id")]
        usage = sorted((UsageRecord(**dict(u)) for u in rows("SELECT * FROM usage WHERE run_id = ?")),
                       key=lambda u: _ROLES.index(u.role))
        trajectory = [t["node_id"] for t in rows("SELECT node_id FROM trajectory WHERE run_id = ? ORDER BY position")]
        return StoredRun(run=run, nodes=nodes, classifications=classifications, values=values,
                         backtracks=backtracks, usage=usage, trajectory=trajectory,
                         unfinished_action=self._unfinished_action(run_id))

    def _interrupted(self, run_id: str, reason: str) -> str:
        """Why the run was cut short, and the action it had under way, whose outcome is unknown (callers hold the
        lock)."""
        unfinished = self._unfinished_action(run_id)
        if unfinished is None:
            return reason
        return (f"{reason}; `{unfinished.action_text}` had been sent to the page and its outcome is unknown: look at "
                "the tab before doing it again (`branchwise resume` judges it by the page)")

    def _unfinished_action(self, run_id: str) -> AuditRecord | None:
        """The run's last `action_sent`, unless an `action_result` follows it: an action whose outcome is unknown."""
        row = self._conn.execute("SELECT * FROM audit WHERE run_id = ? AND kind IN ('action_sent', 'action_result') "
                                 "ORDER BY id DESC LIMIT 1", (run_id,)).fetchone()
        if row is None or row["kind"] != "action_sent":
            return None
        return _audit_record(row)
