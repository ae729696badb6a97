"""The run store: agent runs (greedy and tree search) and their safety audit log kept in SQLite in the data dir, for
`branchwise runs`, `show` and `audit`."""

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
)
from .render import format_audit, format_calls, format_demos, format_node, format_run, format_runs
from .sqlite import SCHEMA_VERSION, RunNotFound, RunStore, default_store_path
from .writer import RecordLost, RunWriter

__all__ = [
    "SCHEMA_VERSION",
    "AuditRecord",
    "BacktrackRecord",
    "ClassificationRecord",
    "DemoStep",
    "DemonstrationRecord",
    "ModelCallRecord",
    "NodeRecord",
    "RecordLost",
    "RunNotFound",
    "RunRecord",
    "RunStore",
    "RunSummary",
    "RunWriter",
    "StoredRun",
    "TrajectoryStep",
    "UsageRecord",
    "ValueRecord",
    "default_store_path",
    "format_audit",
    "format_calls",
    "format_demos",
    "format_node",
    "format_run",
    "format_runs",
]
