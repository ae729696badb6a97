"""The run store's own record types.

They mirror what the planner learns (tree.Node, Classification, values, backtracks, usage) but stay independent of
its in-memory classes, so the on-disk format does not change whenever the planner does, and `branchwise show` can
read old runs without importing the planner.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..core.budget import Limits
from ..core.status import BacktrackMode, BacktrackOutcome, NodeStatus, Role, RunStatus
from ..core.usage import Usage

# "navigation" is in the design's classes; accepted ahead of the classifier so its verdicts can be stored.
ActionClassName = Literal["safe", "navigation", "destructive", "terminating"]
Decision = Literal["approved", "denied", "not_asked"]
ValueKind = Literal["value", "reward"]
# What the safety audit log records: verdicts, confirmations asked and answered, mutating requests the network gate saw,
# held, let through or failed, the check after an action ran, and each action sent to the working tab (written before it
# is sent) with its result. New kinds are appended; stored rows keep their kind.
AuditKind = Literal["classified", "asked", "decided", "request_seen", "request_held", "request_released",
                    "request_failed", "post_check", "action_sent", "action_result"]
AuditDecision = Literal["approved", "denied", "timeout"]


def utc_now() -> datetime:
    return datetime.now(UTC)


class _Record(BaseModel):
    # Frozen: a record is a snapshot of what was written; change it with model_copy(update=...).
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunRecord(_Record):
    run_id: str
    task: str
    strategy: str = ""
    backtrack_mode: str = ""
    # How it planned and what it could spend besides the strategy, so a resumed run goes on the same way: the profile
    # ("": not recorded, a run from before they were), the policy's temperature over the strategy's own (None: the
    # strategy's), retrieved steps, the step limit (None: the strategy's) and the limits in force (the profile's with
    # the user's over them).
    profile: str = ""
    temperature: float | None = None
    examples: bool = False
    max_steps: int | None = None
    limits: Limits = Limits()
    model: str = ""
    start_url: str = ""
    started_at: datetime = Field(default_factory=utc_now)
    status: RunStatus = "running"
    answer: str = ""
    reason: str = ""
    finished_at: datetime | None = None
    # The working tab and the node its page is, as last recorded (None: not yet known).
    tab_id: int | None = None
    current_node: int | None = None


class NodeRecord(_Record):
    """One search-tree node; rewritten (upserted) as search learns its value, checkpoint and status."""

    run_id: str
    node_id: int
    parent_id: int | None = None
    depth: int = 0
    url: str = ""
    title: str = ""
    action_text: str = ""
    action_class: ActionClassName | None = None
    thought: str = ""
    reward: float | None = None
    value: float | None = None
    checkpoint: bool | None = None
    status: NodeStatus = "open"
    # Why the node is dead or invalid, in words (empty otherwise).
    note: str = ""
    answer: str | None = None
    # What the page showed (already redacted upstream); loaded by load_run only, never by list_runs.
    observation_text: str = ""
    created_at: datetime = Field(default_factory=utc_now)


class ClassificationRecord(_Record):
    """How an action was classified at node_id (the page it would run on) and what the user decided."""

    run_id: str
    node_id: int
    action_text: str
    action_class: ActionClassName
    reasons: list[str] = []
    decision: Decision | None = None
    decided_by: str | None = None


class AuditRecord(_Record):
    """One event of a run's safety audit log: what happened (kind), to what, where, why, and who decided.

    Fields that do not apply to a kind stay empty: request_* only for request kinds, decision/decided_by only for
    `decided` (and a released or failed request that a decision covered). decided_by names who answered, e.g.
    "user (terminal)", "user (side panel)", "policy" or "script". seq is the store's row id, set when read back.
    """

    run_id: str
    kind: AuditKind
    created_at: datetime = Field(default_factory=utc_now)
    seq: int | None = None
    node_id: int | None = None
    action_text: str = ""
    action_class: ActionClassName | None = None
    reasons: list[str] = []
    url: str = ""
    element: str = ""
    decision: AuditDecision | None = None
    decided_by: str | None = None
    note: str = ""
    request_method: str = ""
    request_url: str = ""
    # The confirmation's id and one-time nonce, when the approval was bound to them.
    approval_id: str = ""
    nonce: str = ""


class ValueRecord(_Record):
    """One value (state) or reward (action) estimate of a node, with the samples it was aggregated from."""

    run_id: str
    node_id: int
    kind: ValueKind
    score: float
    method: str = ""
    samples: list[float] = []


class BacktrackRecord(_Record):
    run_id: str
    source: int
    target: int
    mode: BacktrackMode
    outcome: BacktrackOutcome
    reason: str = ""
    replayed_actions: int = 0
    env_actions: int = 0
    wall_ms: float = 0.0
    created_at: datetime = Field(default_factory=utc_now)


class ModelCallRecord(_Record):
    """One answered call to the model in a run: which role asked for what, how long it took, what it cost and what
    came back, for reading why a run went where it did; the whole prompt only if the run keeps prompts (else its
    page is the node's)."""

    run_id: str
    role: Role
    # What was asked: the first line of the prompt's system message (which agent or judge).
    asked: str = ""
    seconds: float = 0.0
    usage: Usage = Usage()
    replies: list[str] = []
    created_at: datetime = Field(default_factory=utc_now)
    # The prompt as sent, message by message (`roles.prompt_text`), with `--keep-prompts`; else empty.
    prompt: str = ""


class UsageRecord(Usage):
    """Running totals of one model role in one run; set_usage replaces the previous totals."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: str
    role: Role


class StoredRun(_Record):
    """Everything recorded about one run, as load_run returns it (nodes by id, the rest in write order)."""

    run: RunRecord
    nodes: list[NodeRecord] = []
    classifications: list[ClassificationRecord] = []
    values: list[ValueRecord] = []
    backtracks: list[BacktrackRecord] = []
    usage: list[UsageRecord] = []
    trajectory: list[int] = []
    # An action sent to the working tab with no result on record: the run stopped (a crash) while it ran, so whether
    # it took effect is unknown.
    unfinished_action: AuditRecord | None = None


class TrajectoryStep(_Record):
    """One step of a finished run's chosen path: the page it started from and the action taken there."""

    run_id: str
    task: str
    position: int
    url: str = ""
    observation_text: str = ""
    thought: str = ""
    action_text: str = ""


class DemoStep(_Record):
    """One step of a demonstration: the page it was taken on, why, and what was done."""

    url: str
    observation_text: str = ""
    thought: str = ""
    action_text: str


class DemonstrationRecord(_Record):
    """What exploring a site taught (NNetNav): an instruction and the steps that accomplish it, ending with `stop`.
    `site` is what retrieval matches runs by (a host, or `sandbox:<name>` for the eval's sandbox copies)."""

    demo_id: int | None = None
    site: str
    instruction: str
    steps: list[DemoStep]
    # The outcome reward model's score (1–5) and the persona the episode explored as.
    score: float
    persona: str = ""
    created_at: datetime = Field(default_factory=utc_now)


class RunSummary(_Record):
    """One line of `branchwise runs`: counts only, so listing never reads observations."""

    run_id: str
    task: str
    strategy: str
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None = None
    nodes: int = 0
    backtracks_committed: int = 0
    backtracks_aborted: int = 0
    answer: str = ""
