"""RunWriter: one run's writes to the run store from async code, the same way for every agent (greedy or search).

Each write runs off the event loop. The record is the run's audit log: what was asked, approved and done. A write
that fails is tried again (a database locked by another process frees up); when it still fails, the writer raises
`RecordLost` for it and every later write, and the run stops with that reason rather than acting unrecorded. Only
the final outcome (`finish`) never raises: the run is ending anyway. Without a store every write is a no-op, so
agents need not check.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from ..core.status import FinalStatus
from .records import AuditRecord, ClassificationRecord, ModelCallRecord, NodeRecord, RunRecord, UsageRecord
from .sqlite import RunStore

log = logging.getLogger(__name__)

# Pauses before the second and third attempt of a write.
RETRY_DELAYS_SECONDS = (0.5, 2.0)


class RecordLost(Exception):
    """The run store could not take a write even after retries: the run must not go on unrecorded."""


class RunWriter:
    def __init__(self, store: RunStore | None, run_id: str,
                 retry_delays_seconds: Sequence[float] = RETRY_DELAYS_SECONDS) -> None:
        self.store = store
        self.run_id = run_id
        self.retry_delays = tuple(retry_delays_seconds)
        # Why the record stopped, once it did: every later write refuses with it.
        self.lost: str | None = None

    async def write(self, method: Callable[..., object], *args: object) -> None:
        """Run one RunStore method (unbound, e.g. RunStore.upsert_node) on the store in a worker thread, retrying a
        failure; RecordLost when it cannot be written."""
        store = self.store
        if store is None:
            return
        if self.lost is not None:
            raise RecordLost(self.lost)
        for attempt, delay in enumerate((*self.retry_delays, None), start=1):
            try:
                await asyncio.to_thread(method, store, *args)
                return
            except Exception as exc:  # whatever the store raised, the write is what matters
                if delay is None:
                    self.lost = (f"the run's record could not be written ({type(exc).__name__}: {exc}); stopped so "
                                 "that nothing runs unrecorded")
                    log.exception("run %s: %s failed %d times", self.run_id, method.__name__, attempt)
                    raise RecordLost(self.lost) from exc
                log.warning("run %s: %s failed (%s), trying again in %g s", self.run_id, method.__name__, exc, delay)
                await asyncio.sleep(delay)

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
                     usage: Sequence[UsageRecord] = (), calls: Sequence[ModelCallRecord] = (),
                     scrub: Callable[[str], str] | None = None) -> None:
        """The run's final usage per model role, the model calls not yet stored and, with `scrub`, the run's stored
        actions, thoughts, answers, replies, classifications and audit log scrubbed again (of the secrets the run knows
        as it ends); then its outcome (its answer scrubbed too), last, so that a run on record as ended (an interrupted
        one may be resumed at once by another backend) is complete. Calls that cannot be written do not keep the
        outcome from its record. Tried even after the record was lost (the store may be back); a failure is only
        logged."""
        self.lost = None
        try:
            for record in usage:
                await self.write(RunStore.set_usage, record)
            if calls:
                await self.write(RunStore.add_model_calls, list(calls))
            if scrub is not None:
                await self.write(RunStore.scrub_run, self.run_id, scrub, True)  # ended: its audit log too
        except RecordLost as exc:
            log.warning("run %s: its usage or model calls could not be kept, or its record scrubbed of secrets "
                        "learnt late: %s", self.run_id, exc)
            self.lost = None
        try:
            await self.write(RunStore.finish_run, self.run_id, status, scrub(answer) if scrub else answer, reason)
        except RecordLost as exc:
            log.error("run %s ended %s, but its end could not be recorded: %s", self.run_id, status, exc)
