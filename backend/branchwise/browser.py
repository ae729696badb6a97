"""Async facade over the extension link: tabs, observe, act, network events.

Commands that only read (observe, list tabs) survive the MV3 worker being restarted: they wait for the extension to
reconnect and try once more. Commands that change the page are never repeated behind the caller's back.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

from .link import BrowserEvent, ExtensionError, ExtensionHub, ExtensionLink, LinkClosed
from .protocol import (
    Act,
    ActivateTab,
    ActResult,
    AllowedRequest,
    BrowserCmd,
    CloseTab,
    Done,
    ElementFacts,
    ElementFactsReply,
    ElementRef,
    Envelope,
    GateTab,
    GuardTab,
    Inspect,
    ListTabs,
    Observation,
    Observe,
    OpenTab,
    PageValue,
    ReadPage,
    ReleaseRequest,
    Settle,
    TabInfo,
    TabOpened,
    Tabs,
    new_id,
)

log = logging.getLogger(__name__)

R = TypeVar("R", bound=Envelope)


class BrowserConfig(BaseModel):
    connect_timeout_seconds: float = 60.0
    # The MV3 worker reconnects within ~0.2 s after a restart (docs/platform.md), but a worker that was stopped waits
    # for an event to wake it: at the latest its 30 s alarm. Longer than that, so a run outlives a stopped worker.
    reconnect_grace_seconds: float = 45.0
    observe_timeout_seconds: float = 60.0
    act_timeout_seconds: float = 45.0
    inspect_timeout_seconds: float = 15.0
    open_tab_timeout_seconds: float = 30.0
    # Keep each tab's last capture and let the extension answer "unchanged" instead of capturing the page again.
    reuse_captures: bool = True
    # Tabs whose last capture is kept (a big page's raw tree is tens of MB in memory).
    kept_captures: int = 8


class BrowserDisconnected(RuntimeError):
    pass


# Every way a browser command can fail that is the browser's or the link's doing, not the caller's.
BROWSER_FAILURES = (BrowserDisconnected, ExtensionError, LinkClosed)


class Browser:
    def __init__(self, hub: ExtensionHub, config: BrowserConfig | None = None) -> None:
        self.hub = hub
        self.config = config or BrowserConfig()
        # tab id -> its last full capture, most recently used last.
        self._captures: OrderedDict[int, Observation] = OrderedDict()

    async def connected(self, timeout: float | None = None) -> ExtensionLink:
        return await self.hub.wait_link(self.config.connect_timeout_seconds if timeout is None else timeout)

    async def _request(self, message: Envelope, reply: type[R], timeout: float, *, retry: bool) -> R:
        link = self.hub.link or await self.connected(self.config.reconnect_grace_seconds)
        try:
            return await link.request(message, reply, timeout)
        except LinkClosed as exc:
            if not retry:
                raise BrowserDisconnected(f"the extension disconnected during {message.type}") from exc
            log.info("extension disconnected during %s: waiting for it to reconnect", message.type)
        link = await self.connected(self.config.reconnect_grace_seconds)
        return await link.request(message.model_copy(update={"id": new_id()}), reply, timeout)

    async def list_tabs(self) -> list[TabInfo]:
        return (await self._request(ListTabs(), Tabs, self.config.observe_timeout_seconds, retry=True)).tabs

    async def open_tab(self, url: str, active: bool = True, guarded: bool = False) -> TabInfo:
        """Open a handed-over tab; `guarded` blocks its mutating requests (any method but GET, HEAD, OPTIONS) from the
        first load on."""
        reply = await self._request(OpenTab(url=url, active=active, guarded=guarded), TabOpened,
                                    self.config.open_tab_timeout_seconds, retry=False)
        return reply.tab

    async def guard_tab(self, tab_id: int, guarded: bool) -> None:
        """Turn the block of mutating requests of a handed-over tab on or off."""
        # Idempotent, so safe to repeat after a worker restart.
        await self._request(GuardTab(tab_id=tab_id, guarded=guarded), Done, self.config.act_timeout_seconds, retry=True)

    async def close_tab(self, tab_id: int) -> None:
        self._captures.pop(tab_id, None)
        await self._request(CloseTab(tab_id=tab_id), Done, self.config.act_timeout_seconds, retry=False)

    async def close_tab_quietly(self, tab_id: int) -> None:
        """Close a throw-away tab; one already gone, or a lost extension, is only logged (nothing depends on it)."""
        try:
            await self.close_tab(tab_id)
        except BROWSER_FAILURES as exc:
            log.info("could not close tab %d: %s", tab_id, exc)

    async def activate_tab(self, tab_id: int) -> None:
        await self._request(ActivateTab(tab_id=tab_id), Done, self.config.act_timeout_seconds, retry=True)

    async def observe(self, tab_id: int) -> Observation:
        """The page in the tab. When it has not changed since the last capture kept for the tab, the extension says so
        instead of capturing it again (extension/lib/unchanged.js), and the kept frames stand in: the same objects, so
        the caller can tell (BrowserEnv reuses its processing too)."""
        kept = self._captures.pop(tab_id, None) if self.config.reuse_captures else None
        reuse = kept.capture_id if kept is not None else ""
        observation = await self._request(Observe(tab_id=tab_id, reuse=reuse), Observation,
                                          self.config.observe_timeout_seconds, retry=True)
        if observation.reused:
            if kept is None or observation.capture_id != kept.capture_id:
                log.warning("the extension reused capture %r of tab %d, which is not the one kept (%r): observing "
                            "it afresh", observation.capture_id, tab_id, reuse)
                observation = await self._request(Observe(tab_id=tab_id), Observation,
                                                  self.config.observe_timeout_seconds, retry=True)
            else:
                log.debug("tab %d unchanged since capture %s: reused", tab_id, reuse)
                observation = observation.model_copy(update={"frames": kept.frames})
        else:
            log.debug("tab %d captured afresh (%s)", tab_id, "nothing kept" if kept is None else "the page changed")
        if observation.capture_id and self.config.reuse_captures:
            self._captures[tab_id] = observation
            while len(self._captures) > self.config.kept_captures:
                self._captures.popitem(last=False)
        return observation

    async def act(self, tab_id: int, command: BrowserCmd, *, allow: Sequence[AllowedRequest] = (),
                  settle: Settle | None = None) -> ActResult:
        """`allow`: requests the user approved with this action; while it runs (and only then), the network gate lets
        one matching request through per entry and holds every other mutating request. `settle`: how the extension
        waits for the tab to be quiet before it answers."""
        message = Act(tab_id=tab_id, action=command, allow=list(allow), settle=settle or Settle())
        return await self._request(message, ActResult, self.config.act_timeout_seconds, retry=False)

    async def gate_tab(self, tab_id: int, on: bool, hold_timeout_seconds: float | None = None) -> None:
        """Turn the network gate of a handed-over tab on or off (idempotent, so safe to repeat after a restart)."""
        message = GateTab(tab_id=tab_id, on=on) if hold_timeout_seconds is None else GateTab(
            tab_id=tab_id, on=on, hold_timeout_seconds=hold_timeout_seconds)
        await self._request(message, Done, self.config.act_timeout_seconds, retry=True)

    async def release_request(self, hold_id: str, allow: bool) -> None:
        """Let a held request go or fail it. Never repeated: a second release of one hold is refused anyway."""
        await self._request(ReleaseRequest(hold_id=hold_id, allow=allow), Done, self.config.act_timeout_seconds,
                            retry=False)

    async def inspect(self, tab_id: int, refs: list[ElementRef]) -> list[ElementFacts]:
        """DOM facts (form, method, link target...) of elements, in the order asked; a gone element has found=False."""
        if not refs:
            return []
        reply = await self._request(Inspect(tab_id=tab_id, elements=refs), ElementFactsReply,
                                    self.config.inspect_timeout_seconds, retry=True)
        if len(reply.facts) != len(refs):
            raise ExtensionError("invalid_message", f"inspect asked about {len(refs)} elements, got {len(reply.facts)}")
        return reply.facts

    async def read_page(self, tab_id: int, expression: str = "", prep: Sequence[str] = ()) -> PageValue:
        """The value of `expression` on a guarded tab's page, as text (its HTML for ""); `prep` runs first."""
        # Reading has no side effect in a guarded tab, so a read cut short by a reconnect is asked again.
        return await self._request(ReadPage(tab_id=tab_id, expression=expression, prep=list(prep)), PageValue,
                                   self.config.inspect_timeout_seconds, retry=True)

    def on_event(self, listener: Callable[[BrowserEvent], None]) -> Callable[[], None]:
        """Subscribe to network requests, tab events and dialogs; returns the unsubscribe function."""
        return self.hub.add_event_listener(listener)

    def on_link(self, listener: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        """Hear each new connection of the extension once it is ready; returns the unsubscribe function."""
        return self.hub.add_link_listener(listener)

