"""RunWriter: one run's writes to the run store from async code, the same way for every agent (greedy or search).

Each write runs off the event loop. A failing store is logged once and then left alone: losing the record must not
lose the user's task. Without a store every write is a no-op, so agents need not check.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from ..core.status import FinalStatus
from .records import AuditRecord, ClassificationRecord, NodeRecord, RunRecord, UsageRecord
from .sqlite import RunStore

log = logging.getLogger(__name__)


class RunWriter:
    def __init__(self, store: RunStore | None, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self._failed = False

    async def write(self, method: Callable[..., object], *args: object) -> None:
        """Run one RunStore method (unbound, e.g. RunStore.upsert_node) on the store in a worker thread."""
        store = self.store
        if store is None or self._failed:
            return
        try:
            await asyncio.to_thread(method, store, *args)
        except Exception:  # the record is secondary to the user's task
            log.exception("the run store failed; run %s continues unrecorded", self.run_id)
            self._failed = True

    async def start(self, run: RunRecord) -> None:
        await self.write(RunStore.start_run, run)

    async def node(self, node: NodeRecord) -> None:
        await self.write(RunStore.upsert_node, node)

    async def audit(self, record: AuditRecord) -> None:
        await self.write(RunStore.add_audit, record)

    async def decision(self, record: ClassificationRecord) -> None:
        """The user's answer, put on the verdict it answers rather than added as a second row."""
        await self.write(RunStore.record_decision, record)

    async def trajectory(self, node_ids: Sequence[int]) -> None:
        await self.write(RunStore.set_trajectory, self.run_id, list(node_ids))

    async def finish(self, status: FinalStatus, answer: str = "", reason: str = "",
                     usage: Sequence[UsageRecord] = ()) -> None:
        """The run's final usage per model role, then its outcome (so a finished run always has its usage)."""
        for record in usage:
            await self.write(RunStore.set_usage, record)
        await self.write(RunStore.finish_run, self.run_id, status, answer, reason)
