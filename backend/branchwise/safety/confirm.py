"""Confirmation in the browser: a card in the side panel asks the user about one flagged action (or held request).

An answer counts once, and only when it names the card's approval id and echoes its nonce, so a stale card, a replayed
message or the answer to another question approves nothing. No answer in time, a stopped run or a missing extension:
denied. Whatever the end, the backend sends `confirm_closed` so the card goes away.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from ..core.approval import ApprovalRequest, Decision
from ..link import ExtensionHub, LinkClosed
from ..protocol import ConfirmAnswer, ConfirmClosed, ConfirmOutcome, ConfirmRequest

log = logging.getLogger(__name__)

BY_USER = "user (side panel)"
# Closed confirmations remembered to tell a second answer from a stray one in the log; older ones are forgotten.
REMEMBERED_CLOSED = 256


class ConfirmConfig(BaseModel):
    timeout_seconds: float = Field(default=120.0, gt=0, description="Unanswered this long, a confirmation is denied")



@dataclass
class _Pending:
    nonce: str
    answer: asyncio.Future[bool]


class SidePanelApprover:
    """Asks in the side panel of the connected browser and waits for the matching answer.

    One per backend is enough: runs (and the network gate, through `confirm`) share it; each question has its own id.
    """

    def __init__(self, hub: ExtensionHub, config: ConfirmConfig | None = None) -> None:
        self.hub = hub
        self.config = config or ConfirmConfig()
        self._pending: dict[str, _Pending] = {}
        self._closed: OrderedDict[str, ConfirmOutcome] = OrderedDict()
        self._unsubscribe = hub.add_confirm_listener(self._on_answer)

    def close(self) -> None:
        self._unsubscribe()

    async def decide(self, request: ApprovalRequest) -> Decision:
        """The Approver protocol: one flagged action, bound to the request's approval id and nonce."""
        return await self.confirm(ConfirmRequest(
            run_id=request.run_id, approval_id=request.approval_id, nonce=request.nonce, kind="action",
            tab_id=request.tab_id, action_text=request.action_text, url=request.url, element_label=request.element,
            element=request.element_ref, reasons=list(request.reasons), timeout_s=self.config.timeout_seconds,
            sends=[r.allowed() for r in request.sends]))

    async def confirm(self, message: ConfirmRequest) -> Decision:
        """Shows `message` as a card and waits up to its `timeout_s` for the user."""
        link = self.hub.link
        if link is None:
            return Decision(False, "policy", "the Branchwise extension is not connected, so nobody can be asked in "
                                             "the side panel")
        if message.approval_id in self._pending or message.approval_id in self._closed:
            raise ValueError(f"confirmation {message.approval_id} was already asked")
        pending = _Pending(message.nonce, asyncio.get_running_loop().create_future())
        self._pending[message.approval_id] = pending
        outcome: ConfirmOutcome = "denied"  # also when the run is stopped while the card is up
        try:
            try:
                await link.send(message)
            except LinkClosed:
                return Decision(False, "policy", "the Branchwise extension disconnected before it could be asked")
            log.info("asking in the side panel (%s, %.0f s): %s", message.approval_id, message.timeout_s,
                     message.action_text or f"{message.request_method} {message.request_url}")
            gone = asyncio.ensure_future(link.wait_closed())
            try:
                waiting: set[asyncio.Future[Any]] = {pending.answer, gone}
                await asyncio.wait(waiting, timeout=message.timeout_s,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                gone.cancel()
            if pending.answer.done():
                approved = pending.answer.result()
                outcome = "approved" if approved else "denied"
                return Decision(approved, BY_USER)
            if gone.done():
                return Decision(False, "policy", "the Branchwise extension disconnected before the user answered")
            outcome = "timeout"
            return Decision(False, "timeout", f"no answer in the side panel within {message.timeout_s:g} s",
                            timed_out=True)
        finally:
            self._pending.pop(message.approval_id, None)
            self._remember_closed(message.approval_id, outcome)
            log.info("confirmation %s closed: %s", message.approval_id, outcome)
            await self._send_closed(message.approval_id, outcome)

    def _on_answer(self, message: ConfirmAnswer) -> None:
        pending = self._pending.get(message.approval_id)
        if pending is None:
            if message.approval_id in self._closed:
                log.warning("ignored an answer to confirmation %s: it was already closed (%s); an approval counts "
                            "once", message.approval_id, self._closed[message.approval_id])
            else:
                log.info("ignored an answer to confirmation %s: not asked here", message.approval_id)
            return
        if not secrets.compare_digest(message.nonce.encode(), pending.nonce.encode()):
            log.warning("ignored an answer to confirmation %s: wrong nonce", message.approval_id)
            return
        if pending.answer.done():
            log.warning("ignored a second answer to confirmation %s", message.approval_id)
            return
        pending.answer.set_result(message.approved)

    def _remember_closed(self, approval_id: str, outcome: ConfirmOutcome) -> None:
        self._closed[approval_id] = outcome
        while len(self._closed) > REMEMBERED_CLOSED:
            self._closed.popitem(last=False)

    async def _send_closed(self, approval_id: str, outcome: ConfirmOutcome) -> None:
        # Whichever connection is up now: a reconnected extension still shows the card from its session storage.
        link = self.hub.link
        if link is None:
            return
        try:
            await link.send(ConfirmClosed(approval_id=approval_id, outcome=outcome))
        except LinkClosed:
            log.info("could not close confirmation %s: the extension is not connected", approval_id)
