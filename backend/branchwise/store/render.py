"""Plain-text views of stored runs for `branchwise runs`, `show` and `audit`: no colour, so they pipe and assert."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from ..core.usage import Usage
from .records import (
    AuditRecord,
    ClassificationRecord,
    DemonstrationRecord,
    ModelCallRecord,
    NodeRecord,
    RunSummary,
    StoredRun,
    UsageRecord,
)

TRAJECTORY_MARK = "★"


def _clip(text: str | None, width: int) -> str:
    """One line of at most width characters (whitespace collapsed), with an ellipsis when cut."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def _when(moment: datetime | None) -> str:
    return "" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: frozenset[int]) -> list[str]:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    return ["  ".join(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
                      for i, cell in enumerate(row)).rstrip() for row in (header, *rows)]


def format_runs(summaries: Sequence[RunSummary]) -> str:
    """The `branchwise runs` table, newest first as given."""
    if not summaries:
        return "No runs recorded yet."
    rows = [(s.run_id, _when(s.started_at), s.strategy or "-", s.status, str(s.nodes),
             f"{s.backtracks_committed}/{s.backtracks_aborted}", _clip(s.task, 48), _clip(s.answer, 32))
            for s in summaries]
    header = ("ID", "STARTED", "STRATEGY", "STATUS", "NODES", "BT C/A", "TASK", "ANSWER")
    return "\n".join(_table(header, rows, right=frozenset({4, 5})))


def format_demos(demos: Sequence[DemonstrationRecord], sites: Mapping[str, int], site: str | None) -> str:
    """`branchwise show --demos [SITE]`: each demonstration's instruction, score and steps; without demonstrations,
    which sites have some."""
    if not demos:
        where = f" for {site}" if site else ""
        known = ", ".join(f"{name} ({n})" for name, n in sites.items())
        return (f"No demonstrations{where} yet: `branchwise explore URL` learns some."
                + (f" Sites with demonstrations: {known}." if known else ""))
    lines = []
    for demo in demos:
        lines.append(f"#{demo.demo_id} [{demo.site}] {demo.instruction} (score {demo.score:g}/5, "
                     f"{_when(demo.created_at)}" + (f", as {demo.persona}" if demo.persona else "") + ")")
        lines += [f"    {k}. {step.action_text}  — {step.url}" for k, step in enumerate(demo.steps, start=1)]
    return "\n".join(lines)


def _usage_lines(usage: Sequence[UsageRecord]) -> list[str]:
    if not usage:
        return ["Usage: none recorded"]
    total = sum(usage, Usage())
    # The prompt tokens the server took from its cache, where it says (a local llama.cpp does; many do not).
    cached = bool(total.cached_prompt_tokens)

    def row(name: str, u: Usage) -> tuple[str, ...]:
        return (name, str(u.calls), str(u.prompt_tokens), *([str(u.cached_prompt_tokens)] if cached else []),
                str(u.completion_tokens), str(u.retries))

    rows = [*(row(u.role, u) for u in usage), row("total", total)]
    header = ("role", "calls", "prompt", *(["of which cached"] if cached else []), "completion", "retries")
    return ["Usage:", *("  " + line for line in _table(header, rows, right=frozenset(range(1, len(header)))))]


def format_calls(run_id: str, calls: Sequence[ModelCallRecord]) -> str:
    """`branchwise show RUN --calls`: the time the model worked on each role's calls, then every call in order with
    what it asked, how long it took, its tokens, its prompt in full if the run kept it, and its replies in full."""
    if not calls:
        return f"Run {run_id}: no model calls recorded (runs before schema 7 did not keep them)"
    by_role: dict[str, list[ModelCallRecord]] = {}
    for call in calls:
        by_role.setdefault(call.role, []).append(call)

    def row(name: str, made: Sequence[ModelCallRecord]) -> tuple[str, ...]:
        seconds = sum(c.seconds for c in made)
        return name, str(len(made)), f"{seconds:.1f}", f"{seconds / len(made):.1f}"

    rows = [*(row(role, made) for role, made in by_role.items()), row("total", calls)]
    lines = [f"Model calls of run {run_id}:", *("  " + line for line in _table(
        ("role", "calls", "seconds", "per call"), rows, right=frozenset({1, 2, 3})))]
    for index, call in enumerate(calls, 1):
        u = call.usage
        cached = f", {u.cached_prompt_tokens} cached" if u.cached_prompt_tokens else ""
        lines += ["", f"{index}. {call.role}, {call.seconds:.1f} s, {u.prompt_tokens} prompt tokens{cached}, "
                      f"{u.completion_tokens} completion: {_clip(call.asked, 100)}"]
        if call.prompt:
            lines += ["  prompt:", *("    " + line for line in call.prompt.splitlines())]
        for number, reply in enumerate(call.replies, 1):
            label = f"  reply {number}: " if len(call.replies) > 1 else "  reply: "
            body = reply.strip().splitlines() or [""]
            lines += [label + body[0], *("    " + line for line in body[1:])]
    return "\n".join(lines)


def format_node(node: NodeRecord, parent_url: str | None = None) -> str:
    """`#id action → url  [class] r=.. v=.. ✓checkpoint status (why it is dead or invalid)`; the root shows where
    the run started instead.

    The URL is shown only where the action led to another page than its parent's, so trees stay readable."""
    action = _clip(node.action_text, 100) or (f"(start) {node.url}" if node.parent_id is None else "(no action)")
    if node.parent_id is not None and node.url and parent_url is not None and node.url != parent_url:
        action += f" → {_clip(node.url, 100)}"
    meta: list[str] = []
    if node.action_class is not None:
        meta.append(f"[{node.action_class}]")
    if node.reward is not None:
        meta.append(f"r={node.reward:.2f}")
    if node.value is not None:
        meta.append(f"v={node.value:.2f}")
    if node.checkpoint:
        meta.append("✓checkpoint")
    meta.append(f"{node.status} ({_clip(node.note, 120)})" if node.note else node.status)
    if node.answer is not None:
        meta.append(f'answer="{_clip(node.answer, 60)}"')
    return f"#{node.node_id} {action}  {' '.join(meta)}"


def _tree_lines(nodes: Sequence[NodeRecord], trajectory: Sequence[int]) -> list[str]:
    by_id = {n.node_id: n for n in nodes}
    children: dict[int, list[int]] = {n.node_id: [] for n in nodes}
    # A node whose parent was never written (a crash between writes) is drawn as a root rather than dropped.
    roots = [n.node_id for n in nodes if n.parent_id is None or n.parent_id not in by_id]
    for n in nodes:
        if n.parent_id is not None and n.parent_id in by_id:
            children[n.parent_id].append(n.node_id)
    chosen = set(trajectory)
    lines: list[str] = []
    # (node id, prefix for its own line, prefix for its children's lines); iterative so deep trees cannot overflow.
    stack: list[tuple[int, str, str]] = [(r, "", "") for r in reversed(sorted(roots))]
    while stack:
        node_id, own, below = stack.pop()
        mark = f"{TRAJECTORY_MARK} " if node_id in chosen else ""
        node = by_id[node_id]
        parent = by_id.get(node.parent_id) if node.parent_id is not None else None
        lines.append(f"{own}{mark}{format_node(node, parent.url if parent else None)}")
        kids = sorted(children[node_id])
        for i in reversed(range(len(kids))):
            last = i == len(kids) - 1
            stack.append((kids[i], below + ("└── " if last else "├── "), below + ("    " if last else "│   ")))
    return lines


def _decision(c: ClassificationRecord) -> str:
    if c.decision is None:
        return "undecided"
    text = c.decision.replace("_", " ")
    return f"{text} by {c.decided_by}" if c.decided_by else text


def _merged(classifications: Sequence[ClassificationRecord]) -> list[ClassificationRecord]:
    """One entry per classified action: a decision replaces the undecided verdict it answers. Stores written before
    decisions were put on their verdict hold both rows."""
    merged: list[ClassificationRecord] = []
    for c in classifications:
        if c.decision is not None:
            earlier = next((i for i in reversed(range(len(merged))) if merged[i].decision is None
                            and (merged[i].node_id, merged[i].action_text) == (c.node_id, c.action_text)), None)
            if earlier is not None:
                merged[earlier] = c
                continue
        merged.append(c)
    return merged


def format_run(stored: StoredRun) -> str:
    """`branchwise show`: header, usage, the tree with the trajectory marked, the trajectory, backtracks, and the
    destructive actions with why they were flagged and what was decided."""
    run = stored.run
    lines = [f"Run {run.run_id}: {run.status}", f"Task:      {run.task}"]
    how = [f"backtracking: {run.backtrack_mode}"] if run.backtrack_mode else []
    how += [f"profile {run.profile}"] if run.profile else []
    how += [f"temperature {run.temperature:g}"] if run.temperature is not None else []
    how += ["retrieved steps"] if run.examples else []
    strategy = (run.strategy or "-") + (f" ({', '.join(how)})" if how else "")
    lines.append(f"Strategy:  {strategy}")
    if run.model:
        lines.append(f"Model:     {run.model}")
    if run.start_url:
        lines.append(f"Start URL: {run.start_url}")
    started = f"Started:   {_when(run.started_at)}"
    if run.finished_at is not None:
        took = (run.finished_at - run.started_at).total_seconds()
        started += f", finished {_when(run.finished_at)} (took {took:.1f} s)"
    lines.append(started)
    if run.answer:
        lines.append(f"Answer:    {run.answer}")
    if run.reason:
        lines.append(f"Reason:    {run.reason}")
    sent = stored.unfinished_action
    if sent is not None and run.status != "running":
        lines.append(f"Unknown:   `{_clip(sent.action_text, 80)}` was sent to {sent.url or 'the page'} at "
                     f"{sent.created_at.astimezone(UTC).strftime('%H:%M:%S')} UTC and no result was recorded: it "
                     "may or may not have taken effect")
    if run.status == "interrupted":
        lines.append(f"Resume:    branchwise resume {run.run_id}   (goes on in the tab it worked in, while that is "
                     "open)")

    lines += ["", *_usage_lines(stored.usage), ""]
    lines.append(f"Tree ({len(stored.nodes)} nodes, {TRAJECTORY_MARK} = chosen trajectory):")
    lines += _tree_lines(stored.nodes, stored.trajectory) or ["  (no nodes recorded)"]

    by_id = {n.node_id: n for n in stored.nodes}
    steps = [by_id[i] for i in stored.trajectory if i in by_id and by_id[i].action_text]
    lines.append("")
    lines.append("Chosen trajectory:" if steps else "Chosen trajectory: none")
    lines += [f"  {i}. #{n.node_id} {_clip(n.action_text, 100)}" for i, n in enumerate(steps, 1)]

    lines.append("")
    lines.append("Backtracks:" if stored.backtracks else "Backtracks: none")
    for b in stored.backtracks:
        line = (f"  #{b.source} -> #{b.target}  {b.mode} {b.outcome}  replayed={b.replayed_actions} "
                f"env_actions={b.env_actions} wall_ms={b.wall_ms:.0f}")
        lines.append(f"{line}  {_clip(b.reason, 100)}" if b.reason else line)

    destructive = [c for c in _merged(stored.classifications) if c.action_class == "destructive"]
    lines.append("")
    lines.append("Destructive actions:" if destructive else "Destructive actions: none")
    for c in destructive:
        lines.append(f"  #{c.node_id} {_clip(c.action_text, 100)}: {_decision(c)}")
        lines += [f"    - {_clip(reason, 110)}" for reason in c.reasons]
    return "\n".join(lines)


AUDIT_KIND_WIDTH = len("request_released")


def _audit_line(e: AuditRecord) -> str:
    """What an event was about, where, and what was decided, on one line."""
    if e.kind.startswith("request_"):
        what = " ".join(part for part in (e.request_method, _clip(e.request_url, 100)) if part) or "(request)"
        if e.action_text:
            what += f" during `{_clip(e.action_text, 60)}`"
    else:
        what = " ".join(part for part in (f"#{e.node_id}" if e.node_id is not None else "",
                                          _clip(e.action_text, 100)) if part) or "-"
    if e.action_class is not None:
        what += f" [{e.action_class}]"
    if e.element:
        what += f" on {_clip(e.element, 60)}"
    if e.url:
        what += f" at {_clip(e.url, 100)}"
    if e.decision is not None:
        what += f" → {e.decision}" + (f" by {e.decided_by}" if e.decided_by else "")
    return what


def format_audit(entries: Sequence[AuditRecord], run_id: str | None = None) -> str:
    """`branchwise audit`: one run's events (run_id given) or the newest across runs, in time order, times in UTC;
    why an action was flagged, the answer's note and the approval's id go on the lines below their event."""
    if not entries:
        return f"Run {run_id}: no audit entries recorded." if run_id else "No audit entries recorded yet."
    if run_id:
        lines = [f"Audit log of run {run_id} ({len(entries)} entries, times in UTC):"]
    else:
        lines = [f"Audit log, newest {len(entries)} entries across runs (times in UTC):"]
    run_width = max(len(e.run_id) for e in entries)
    for e in entries:
        prefix = e.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") + "  "
        if not run_id:
            prefix += e.run_id.ljust(run_width) + "  "
        prefix += e.kind.ljust(AUDIT_KIND_WIDTH) + "  "
        lines.append(prefix + _audit_line(e))
        below = " " * len(prefix)
        lines += [f"{below}why: {_clip(reason, 110)}" for reason in e.reasons]
        if e.note:
            lines.append(f"{below}note: {_clip(e.note, 110)}")
        if e.approval_id:
            lines.append(f"{below}approval: {e.approval_id}")
    return "\n".join(lines)
