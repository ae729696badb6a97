"""Everything a search run learns goes through here: to the run store as it happens, and to the live views.

The store write happens before the views are told, so what a user saw is always on disk. A failing store is logged and
the run goes on: losing the record must not lose the user's task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..actions import Action
from ..agent.reporting import RunReporter
from ..core.approval import ApprovalRequest, Decision, covers, element_label
from ..core.classes import ActionClass, Classification
from ..core.status import Role
from ..core.usage import Usage
from ..protocol import BacktrackView, FrontierItemView, TreeNodeView, TreeUpdate
from ..safety.postcheck import PostCheck
from ..safety.secrets import SecretKeeper
from ..store import (
    AuditRecord,
    BacktrackRecord,
    ClassificationRecord,
    ModelCallRecord,
    NodeRecord,
    RecordLost,
    RunStore,
    RunWriter,
    UsageRecord,
    ValueRecord,
)
from ..store.records import ValueKind
from .backtrack import BacktrackResult
from .roles import ModelCall, prompt_text
from .state import SearchState
from .tree import Node

log = logging.getLogger(__name__)


class SearchTrace:
    def __init__(self, run_id: str, strategy: str, reporter: RunReporter, store: RunStore | None,
                 state: SearchState | None = None, secrets: SecretKeeper | None = None, *,
                 keep_prompts: bool = False) -> None:
        self.run_id = run_id
        self.strategy = strategy
        self.reporter = reporter
        self.store = store
        self.writer = RunWriter(store, run_id)
        # The run's search state, read here and never changed: what is recorded and drawn.
        self.state = state or SearchState()
        self.backtracks: list[BacktrackView] = []
        self.trajectory: list[int] = []
        # What the store already holds of each node: its page text is written once, and the checkpoint flag it has.
        self._text_written: set[int] = set()
        self._checkpoint_written: dict[int, bool | None] = {}
        # The working tab and current node last written (set_position), so an unchanged position is not rewritten.
        self._position: tuple[int, int | None] | None = None
        # Each role's totals as last written (usage), for the same reason.
        self._usage_written: dict[Role, Usage] = {}
        # The run's answered model calls, in order, and how many of them are stored (`usage`, `call_records`).
        self.calls: list[ModelCall] = []
        self._calls_written = 0
        # Whether each call is stored with its whole prompt (`--keep-prompts`), not only what it asked.
        self.keep_prompts = keep_prompts
        # The last write of calls and how many were on record before it: shielded from a cancel, so the run's end
        # waits for it rather than losing or repeating its calls (unwritten_calls).
        self._calls_write: asyncio.Future[None] | None = None
        self._calls_before_write = 0
        # The run's secrets (the same keeper as the search's): stored replies are scrubbed with it.
        self.secrets = secrets or SecretKeeper()
        # How many secrets the keeper knew when the store's rows were last scrubbed (at first: when none were written).
        self._scrubbed_for = self.secrets.count

    def _node_record(self, node: Node) -> NodeRecord:
        # The store keeps the page text it has when an update sends none; pages can be hundreds of kilobytes.
        text = "" if node.id in self._text_written else node.text
        if text:
            self._text_written.add(node.id)
        self._checkpoint_written[node.id] = node.checkpoint
        return NodeRecord(
            run_id=self.run_id, node_id=node.id, parent_id=node.parent_id, depth=node.depth, url=node.url,
            title=node.title,
            # Scrubbed again: the action, thought and answer were sealed with the secrets known then, and this update
            # must not put back one the run learnt since.
            action_text=self.secrets.scrub(node.action_text) if node.action_text else node.action_text,
            action_class=node.action_class.value if node.action_class else None,
            thought=self.secrets.scrub(node.thought),
            reward=node.reward, value=node.value, checkpoint=node.checkpoint, status=node.status,
            note=self.secrets.scrub(node.note) if node.note else "",
            answer=self.secrets.scrub(node.answer) if node.answer else node.answer,
            observation_text=text,
        )

    async def node(self, node: Node) -> None:
        """A node was added or learned something (value, checkpoint, status)."""
        await self.nodes([node])

    async def nodes(self, nodes: Sequence[Node]) -> None:
        if self.store is not None:
            for node in nodes:
                await self.writer.node(self._node_record(node))
        await self.publish()

    async def classified(self, node_id: int, action_text: str, classification: Classification,
                         action: Action | None = None) -> None:
        """A verdict on an action proposed at node_id: one classification row (its decision comes later, onto the
        same row) and a `classified` audit event with the page it would run on."""
        if self.store is None:
            return
        await self.writer.write(RunStore.add_classification, ClassificationRecord(
            run_id=self.run_id, node_id=node_id, action_text=action_text,
            action_class=classification.action_class.value, reasons=list(classification.reasons)))
        at = self.state.tree.nodes.get(node_id)
        await self.writer.audit(AuditRecord(
            run_id=self.run_id, kind="classified", node_id=node_id, action_text=action_text,
            action_class=classification.action_class.value, reasons=list(classification.reasons),
            url=at.url if at else "", element=element_label(action, at.page) if action and at else ""))

    async def asked(self, node_id: int, request: ApprovalRequest, classification: Classification) -> None:
        """The user is asked about an action: the audit log keeps exactly what they were shown. Written before the
        answer arrives, so a question nobody answered is on record too."""
        if self.store is not None:
            await self.writer.audit(AuditRecord(
                run_id=self.run_id, kind="asked", node_id=node_id, action_text=request.action_text,
                action_class=classification.action_class.value, reasons=list(request.reasons), url=request.url,
                element=request.element, approval_id=request.approval_id, nonce=request.nonce,
                note=covers(request.sends), request_method=request.sends[0].method if request.sends else "",
                request_url=request.sends[0].url if request.sends else ""))

    async def decided(self, node_id: int, request: ApprovalRequest, classification: Classification,
                      decision: Decision) -> None:
        """The answer: onto the action's classification row (so `show` lists it once) and as a `decided` event."""
        if self.store is None:
            return
        # A timeout is a denial on the verdict (`show`: "denied by timeout"); the audit log keeps it apart.
        await self.writer.decision(ClassificationRecord(
            run_id=self.run_id, node_id=node_id, action_text=request.action_text,
            action_class=classification.action_class.value, reasons=list(classification.reasons),
            decision="approved" if decision.approved else "denied", decided_by=decision.by))
        await self.writer.audit(AuditRecord(
            run_id=self.run_id, kind="decided", node_id=node_id, action_text=request.action_text,
            action_class=classification.action_class.value, url=request.url, element=request.element,
            decision=decision.outcome, decided_by=None if decision.timed_out else decision.by, note=decision.note,
            approval_id=request.approval_id, nonce=request.nonce))

    async def post_checked(self, node_id: int, action_text: str, check: PostCheck) -> None:
        """What an action run at node_id really sent, against its class (safety/postcheck.py): a `post_check` audit
        row with both, whenever the requests say something about the class."""
        if not check.recorded:
            return
        seen = check.sent + check.refused
        if self.store is not None:
            at = self.state.tree.nodes.get(node_id)
            await self.writer.audit(AuditRecord(
                run_id=self.run_id, kind="post_check", node_id=node_id, action_text=action_text,
                action_class=check.action_class.value, reasons=[r.describe() for r in seen],
                url=at.url if at else "", note=f"{check.verdict}: {check.note}",
                request_method=seen[0].method if seen else "", request_url=seen[0].url if seen else ""))
        if check.verdict != "confirmed":
            await self.progress(f"`{action_text}`: the class is {check.verdict} by what it sent ({check.note})")

    async def at(self, tab_id: int) -> None:
        """Where the run is now: the working tab and the node it shows. Written when it changes, so a resumed run
        starts from the last place it is known to have been."""
        position = (tab_id, self.state.current)
        if self.store is None or position == self._position:
            return
        await self.writer.write(RunStore.set_position, self.run_id, tab_id, self.state.current)
        self._position = position

    def already_stored(self, node_ids: Sequence[int]) -> None:
        """Nodes a resumed run brings back from the store: their page text there stays as first recorded."""
        self._text_written.update(node_ids)

    async def action_sent(self, node_id: int, action_text: str, action_class: ActionClass, url: str) -> None:
        """Written before an action goes to the working tab (a failed write stops the run before it is sent), so a
        crash while it runs leaves it on record as sent with no result: its outcome is unknown."""
        if self.store is not None:
            await self.writer.audit(AuditRecord(run_id=self.run_id, kind="action_sent", node_id=node_id,
                                                action_text=action_text, action_class=action_class.value, url=url))

    async def action_result(self, node_id: int, action_text: str, error: str, note: str = "") -> None:
        """What came of an action sent: `error`, else `note`, else done."""
        if self.store is not None:
            await self.writer.audit(AuditRecord(run_id=self.run_id, kind="action_result", node_id=node_id,
                                                action_text=action_text, note=error or note or "done"))

    async def usage(self, per_role: Mapping[Role, Usage]) -> None:
        """Each role's running totals and the model calls answered since the last write, kept current so a crash loses
        no more than the calls since the last step; a role whose totals are as last written is not written again (no
        call between the send and the step). Every reply has been read by then, so a secret it types is known and
        scrubbed from them; if the run learnt one since the last step, the thoughts and replies already stored are
        scrubbed of it too (a password the model wrote down a step before it typed it), before the action is sent."""
        if self.store is None:
            return
        for role, used in per_role.items():
            if self._usage_written.get(role) != used:
                await self.writer.write(RunStore.set_usage, UsageRecord(run_id=self.run_id, role=role,
                                                                        **used.model_dump()))
                self._usage_written[role] = used
        if self._calls_written < len(self.calls):
            records, self._calls_before_write = self.call_records(), self._calls_written
            self._calls_written = len(self.calls)
            # A cancel (the user's stop) while it runs in its thread or waits to retry leaves it going: the run's end
            # waits for it. A write that failed is left to the end to try again.
            self._calls_write = asyncio.ensure_future(self.writer.write(RunStore.add_model_calls, records))
            try:
                await asyncio.shield(self._calls_write)
            except RecordLost:
                self._calls_written = self._calls_before_write
                raise
        if self._scrubbed_for != self.secrets.count:
            known = self.secrets.count
            await self.writer.write(RunStore.scrub_run, self.run_id, self.secrets.scrub)
            self._scrubbed_for = known

    async def scored(self, node_id: int, kind: ValueKind, score: float, method: str, samples: Sequence[float]) -> None:
        if self.store is not None:
            await self.writer.write(RunStore.add_value, ValueRecord(
                run_id=self.run_id, node_id=node_id, kind=kind, score=score, method=method, samples=list(samples)))

    async def model_called(self, call: ModelCall) -> None:
        """Kept in memory until the next step (`usage`) or the run's end: a reply may hold a secret the run learns
        only once the reply is read (a password the model types into a password field). Its messages only if prompts
        are kept: the run holds on to every call, and a prompt holds a page."""
        self.calls.append(call if self.keep_prompts else replace(call, messages=()))

    async def unwritten_calls(self) -> list[ModelCallRecord]:
        """The calls the run's end must write: the ones not on record once a write still under way has ended (one
        that failed counts as not on record)."""
        write, self._calls_write = self._calls_write, None
        if write is not None:
            try:
                await write
            except Exception:  # RecordLost, or whatever it raised: its calls are written at the end instead
                self._calls_written = min(self._calls_written, self._calls_before_write)
        return self.call_records()

    def call_records(self) -> list[ModelCallRecord]:
        """The model calls not yet stored, as stored: every reply, and the prompt if kept, scrubbed of the secrets the
        run knows."""
        return [ModelCallRecord(run_id=self.run_id, role=c.role, asked=c.asked, seconds=c.seconds, usage=c.usage,
                                replies=[self.secrets.scrub(r) for r in c.replies], created_at=c.at,
                                prompt=self.secrets.scrub(prompt_text(c.messages)) if self.keep_prompts else "")
                for c in self.calls[self._calls_written:]]

    async def backtracked(self, source: int, target: int, result: BacktrackResult) -> None:
        self.backtracks.append(BacktrackView(source=source, target=target, mode=result.mode, outcome=result.outcome,
                                             reason=result.reason))
        if self.store is not None:
            await self.writer.write(RunStore.add_backtrack, BacktrackRecord(
                run_id=self.run_id, source=source, target=target, mode=result.mode, outcome=result.outcome,
                reason=result.reason, replayed_actions=result.replayed, env_actions=result.env_actions,
                wall_ms=result.wall_ms))
        # Planning the replay may have probed nodes for the checkpoint flag.
        if self.store is not None:
            for node in self.state.tree:
                if node.checkpoint != self._checkpoint_written.get(node.id):
                    await self.writer.node(self._node_record(node))
        word = {"committed": "committed", "aborted": "aborted", "failed": "FAILED"}[result.outcome]
        await self.progress(f"backtrack #{source} -> #{target} ({result.mode}): {word}, {result.replayed} replayed, "
                            f"{result.env_actions} browser actions, {result.wall_ms / 1000:.1f} s"
                            + (f" — {result.reason}" if result.reason else ""))

    async def chose(self, trajectory: Sequence[int]) -> None:
        self.trajectory = list(trajectory)
        await self.writer.trajectory(self.trajectory)
        await self.publish()

    async def progress(self, text: str) -> None:
        await self.reporter.progress(self.run_id, text)

    def view(self) -> TreeUpdate:
        nodes = [
            TreeNodeView(id=n.id, parent=n.parent_id, action=n.action_text, url=n.url, value=n.value, reward=n.reward,
                         action_class=n.action_class.value if n.action_class else None, status=n.status,
                         checkpoint=n.checkpoint, note=self.secrets.scrub(n.note) if n.note else "")
            for n in self.state.tree
        ]
        frontier = [FrontierItemView(node=i.node_id, action=i.action_text, action_class=i.action_class.value,
                                     reward=i.reward) for i in self.state.frontier]
        return TreeUpdate(run_id=self.run_id, strategy=self.strategy, nodes=nodes, current=self.state.current,
                          frontier=frontier, backtracks=list(self.backtracks), trajectory=self.trajectory)

    async def publish(self) -> None:
        await self.reporter.tree(self.view())
