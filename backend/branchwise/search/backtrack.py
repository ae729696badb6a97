"""Getting the browser to a node elsewhere in the tree.

Speculative (WebOperator Alg. 3): open the nearest checkpoint in new, guarded tabs (mutating requests blocked), replay
the UI actions since it while checking every snapshot, and only then swap the new tab in for the working tab. Any
mismatch closes the new tabs and leaves the working tab exactly as it was.

Naive (Koh et al.): navigate the working tab back to the root and replay every action. Kept for comparison: it has no
way back when the replay goes wrong, and it repeats whatever the actions did.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Protocol

from ..actions import Action, Goto
from ..agent.env import BrowserEnv, EnvView
from ..browser import BROWSER_FAILURES, Browser
from ..core.status import BacktrackMode, BacktrackOutcome
from ..safety.sites import SiteRefused
from .checkpoint import is_checkpoint
from .snapshot import compare_snapshot, retarget
from .tabremap import TabRemap
from .tree import Node, SearchTree
from .urlcheck import load_failure

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class BacktrackResult:
    committed: bool
    mode: BacktrackMode
    reason: str = ""
    replayed: int = 0
    # Everything done in a browser for this backtrack: tabs opened, navigations and replayed actions.
    env_actions: int = 0
    wall_ms: float = 0.0
    # The pending action, with its element id moved onto the live page.
    action: Action | None = None
    # True when the working tab was left somewhere other than where it was (naive replay that failed midway).
    working_tab_changed: bool = False

    @property
    def outcome(self) -> BacktrackOutcome:
        if self.committed:
            return "committed"
        return "failed" if self.working_tab_changed else "aborted"


class Backtracker(Protocol):
    mode: BacktrackMode

    async def move(self, env: BrowserEnv, tree: SearchTree, target_id: int, pending: Action | None) -> BacktrackResult:
        ...


def check_step(stored: Node, action: Action | None, live: EnvView) -> tuple[str | None, Action | None]:
    """Compare the live page with the node's stored snapshot before `action` runs there (WebOperator App. E).

    Returns (mismatch reason or None, the action retargeted onto the live page).
    """
    if stored.page is None or live.page is None:
        if (stored.page is None) != (live.page is None):
            return "a dialog is open on one page and not on the other", None
        return None, action
    element_id = action.element_id if action is not None else None
    match, _ = compare_snapshot(stored.page, element_id, live.page)
    if not match.ok:
        return match.reason, None
    if action is None:
        return None, None
    moved = retarget(action, stored.page, live.page)
    if moved is None:
        return f"cannot find the element of `{action.to_text()}` on the replayed page", None
    return None, moved


class CheckpointProbe:
    """Decides lazily whether a node is a checkpoint, by reloading its URL in a throw-away guarded tab."""

    def __init__(self, browser: Browser, env_template: BrowserEnv) -> None:
        self.browser = browser
        self.env_template = env_template
        self.probes = 0

    async def check(self, tree: SearchTree, node: Node) -> bool:
        if node.checkpoint is not None:
            return node.checkpoint
        parent = tree[node.parent_id] if node.parent_id is not None else None
        if node.page is None or (parent is not None and _same_url(parent.url, node.url)):
            node.checkpoint = False
            return False
        tab = await self.browser.open_tab(node.url, active=False, guarded=True)
        self.probes += 1
        try:
            probe = BrowserEnv(self.browser, tab.tab_id, self.env_template.config)
            reloaded = await probe.observe()
        finally:
            await self.browser.close_tab_quietly(tab.tab_id)
        # A page that fails to load again (an error page, HTTP 4xx/5xx) is no place to restart from.
        loads = load_failure(node.url, reloaded.navigation) is None
        node.checkpoint = loads and reloaded.page is not None and is_checkpoint(
            url=node.url, parent_url=parent.url if parent else None, before=node.page, after_reload=reloaded.page)
        log.info("node %d is %sa checkpoint", node.id, "" if node.checkpoint else "not ")
        return node.checkpoint


def _same_url(a: str, b: str) -> bool:
    return a.split("#", 1)[0] == b.split("#", 1)[0]



async def plan_replay(tree: SearchTree, target_id: int, probe: CheckpointProbe) -> tuple[Node, list[Node]] | None:
    """The nearest verified checkpoint at or above the target and the nodes to replay after it; None without one.

    Every node on the path, the root included, is probed deepest first, and the first checkpoint found ends it.
    """
    for node in reversed(tree.path(target_id)):
        if await probe.check(tree, node):
            break
    return tree.replay_path(target_id)


def no_checkpoint(target_id: int) -> str:
    return (f"no state on the way to #{target_id} survives a reload, so no replay can rebuild it (its URL alone "
            "would lose what was done on the page)")


class _Meter:
    """What one backtrack cost: wall time, and the browser work of the checkpoint probes made during it (each opens a
    tab and reads it)."""

    def __init__(self, probe: CheckpointProbe) -> None:
        self.probe = probe
        self.started = time.perf_counter()
        self.probes_before = probe.probes

    def result(self, mode: BacktrackMode, committed: bool, reason: str, replayed: int, env_actions: int,
               action: Action | None, working_tab_changed: bool = False) -> BacktrackResult:
        probing = 2 * (self.probe.probes - self.probes_before)
        return BacktrackResult(committed, mode, reason, replayed, env_actions + probing,
                               (time.perf_counter() - self.started) * 1000, action, working_tab_changed)


class SpeculativeBacktracker:
    mode: BacktrackMode = "speculative"

    def __init__(self, browser: Browser, probe: CheckpointProbe) -> None:
        self.browser = browser
        self.probe = probe

    async def move(self, env: BrowserEnv, tree: SearchTree, target_id: int, pending: Action | None) -> BacktrackResult:
        meter = _Meter(self.probe)
        opened: list[int] = []
        replayed = 0

        def result(committed: bool, reason: str = "", action: Action | None = None) -> BacktrackResult:
            # Browser work: tabs opened for the replay and actions replayed (and the probes, counted by the meter).
            return meter.result(self.mode, committed, reason, replayed, len(opened) + replayed, action)

        try:
            plan = await plan_replay(tree, target_id, self.probe)
            if plan is None:
                return result(False, no_checkpoint(target_id))
            start, path = plan
            urls = list(start.tabs) or [start.url]
            active = min(start.active_tab, len(urls) - 1)
            existing = len(await self.browser.list_tabs())
            for url in urls:
                opened.append((await self.browser.open_tab(url, active=False, guarded=True)).tab_id)
            remap = TabRemap.from_tabs(existing=existing, recorded=len(urls))
            spec = BrowserEnv(self.browser, opened[active], env.config)
            view = await spec.observe()
            for node in path:
                parent = tree[node.parent_id] if node.parent_id is not None else node
                mismatch, live_action = check_step(parent, node.action, view)
                if mismatch is not None:
                    return await self._abort(opened, result(False, f"before replaying `{node.action_text}`: "
                                                                   f"{mismatch}"))
                assert live_action is not None
                outcome = await spec.execute(remap.remap(live_action))
                replayed += 1
                if not outcome.ok:
                    return await self._abort(opened, result(False, f"replaying `{node.action_text}` failed: "
                                                                   f"{outcome.error}"))
                view = await spec.observe()
            mismatch, live_pending = check_step(tree[target_id], pending, view)
            if mismatch is not None:
                return await self._abort(opened, result(False, f"at the target: {mismatch}"))
            await self._commit(env, spec, opened)
            return result(True, action=live_pending)
        except BROWSER_FAILURES as exc:
            return await self._abort(opened, result(False, f"the browser failed during replay: {exc}"))
        except SiteRefused as exc:  # the replay landed on a site the user's lists refuse: the main tab is untouched
            return await self._abort(opened, result(False, f"the replay reached a refused site: {exc}"))

    async def _abort(self, opened: list[int], outcome: BacktrackResult) -> BacktrackResult:
        for tab_id in opened:
            await self.browser.close_tab_quietly(tab_id)
        log.info("speculative backtrack aborted: %s", outcome.reason)
        return outcome

    async def _commit(self, env: BrowserEnv, spec: BrowserEnv, opened: list[int]) -> None:
        for tab_id in opened:
            # The network gate takes over before the guard goes, so no mutating request slips out in between.
            if env.watch is not None:
                await env.watch.adopt(tab_id)
            await self.browser.guard_tab(tab_id, False)
        old = env.tab_id
        env.tab_id, env.last = spec.tab_id, spec.last
        await self.browser.activate_tab(spec.tab_id)
        await self.browser.close_tab_quietly(old)
        # Tab numbers and the page header changed with the swap; the next prompt must see the page as it is now.
        await env.observe()


class NaiveBacktracker:
    mode: BacktrackMode = "naive"

    def __init__(self, browser: Browser, probe: CheckpointProbe) -> None:
        self.browser = browser
        self.probe = probe

    async def move(self, env: BrowserEnv, tree: SearchTree, target_id: int, pending: Action | None) -> BacktrackResult:
        meter = _Meter(self.probe)
        chain = tree.path(target_id)
        env_actions, replayed = 0, 0

        def result(committed: bool, reason: str = "", action: Action | None = None,
                   touched: bool = True) -> BacktrackResult:
            return meter.result(self.mode, committed, reason, replayed, env_actions, action,
                                working_tab_changed=touched and not committed)

        try:
            # Koh et al. reset to the start; here the start must rebuild from its URL, like any replay's.
            if not await self.probe.check(tree, chain[0]):
                return result(False, no_checkpoint(target_id), touched=False)
            outcome = await env.execute(Goto(chain[0].url))
            env_actions += 1
            if not outcome.ok:
                return result(False, f"could not reopen {chain[0].url}: {outcome.error}")
            view = await env.observe()
            for node in chain[1:]:
                parent = tree[node.parent_id] if node.parent_id is not None else node
                if node.action is None:
                    continue
                live = retarget(node.action, parent.page, view.page) if parent.page and view.page else node.action
                if live is None:
                    return result(False, f"cannot find the element of `{node.action_text}` again")
                outcome = await env.execute(live)
                env_actions += 1
                replayed += 1
                if not outcome.ok:
                    return result(False, f"replaying `{node.action_text}` failed: {outcome.error}")
                view = await env.observe()
            target = tree[target_id]
            live_pending = pending
            if pending is not None and target.page is not None and view.page is not None:
                live_pending = retarget(pending, target.page, view.page)
                if live_pending is None:
                    return result(False, f"cannot find the element of `{pending.to_text()}` again")
            return result(True, action=live_pending)
        except BROWSER_FAILURES as exc:
            return result(False, f"the browser failed during replay: {exc}")
