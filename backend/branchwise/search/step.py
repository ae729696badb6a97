"""The one step every search strategy takes: run an action proposed at a node and add the state it leads to.

In order: ask the user first if the action is destructive (before any replay is spent on it); bring the browser to the
node (speculative replay; a failed one marks the node so no other action there tries the same replay); move the action
onto the live page; run it with exactly what its approval lets through the network gate; check what it really sent;
observe; add the child; recognise a revisited state; re-root the tree when the site changed. And the last step: give an
answer proposed at a node, from that node's page.

WebArena's repeat rule (the same action proposed over and over on an unchanged page) needs no counter here: every
node is expanded once, and an action that leaves the page as it was leads to a revisit, which is never explored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..actions import Action, GoBack, Goto, Stop
from ..agent.env import ExecResult
from ..browser import BrowserDisconnected
from ..core.classes import ActionClass, Classification
from ..protocol import NavigationInfo
from ..safety.postcheck import post_check
from ..safety.sites import SiteRefused
from .context import LostTrack, SearchContext, SearchOutcome, ask_approval, live_action, node_from_view, record_step
from .frontier import FrontierItem
from .snapshot import settled_view, state_key
from .tree import Node


@dataclass(frozen=True)
class Advanced:
    """What came of one step. `node` is the state the action led to (None when nothing ran: `reason` says why);
    `changed_site` means the tree was re-rooted at it, so nothing before it can be reached again."""

    node: Node | None
    reason: str = ""
    changed_site: bool = False


async def reach(ctx: SearchContext, node: Node, pending: Action | None) -> tuple[Action | None, str]:
    """Bring the working tab to `node` so `pending` can run there; returns the action as it must run on the live page,
    or None and why not. A replay that cannot work is remembered on the node."""
    tree = ctx.state.tree
    if node.unreachable:
        return None, node.unreachable
    if ctx.state.current == node.id:
        if pending is None:
            return None, ""
        moved = live_action(ctx, node, pending)
        return (moved, "") if moved is not None else (None, "its element is gone from the page")
    source = ctx.state.current if ctx.state.current is not None else tree.root_id
    result = await ctx.backtracker.move(ctx.env, tree, node.id, pending)
    await ctx.trace.backtracked(source, node.id, result)
    if result.working_tab_changed:
        raise LostTrack(f"replay failed and the working tab was left at an unknown page ({result.reason})")
    if not result.committed:
        node.unreachable = f"cannot go back to #{node.id}: {result.reason}"
        return None, node.unreachable
    ctx.state.current = node.id
    await ctx.trace.at(ctx.env.tab_id)
    return result.action, ""


def back_within_trajectory(action: Action, lineage: Sequence[Node], live: NavigationInfo | None) -> Action:
    """`go_back` where the working tab has no page behind it (restored at this page by a backtrack) goes to the page
    the trajectory came from, not to the blank page the restored tab started at."""
    if not isinstance(action, GoBack) or live is None or live.can_go_back is not False or not lineage:
        return action
    here = lineage[-1].url
    previous = next((n.url for n in reversed(lineage[:-1]) if n.url and n.url != here), None)
    return Goto(previous) if previous else action


async def advance(ctx: SearchContext, parent: Node, item: FrontierItem, *, recognise_revisits: bool = True) -> Advanced:
    """Run `item` (proposed at `parent`) in the working tab and add the state it leads to as `parent`'s child.

    `recognise_revisits=False` keeps a line of steps a line (greedy: every step is a node, revisits included)."""
    tree = ctx.state.tree
    destructive = item.action_class is ActionClass.DESTRUCTIVE
    if parent.unreachable:
        return Advanced(None, parent.unreachable)
    if destructive:
        decision = await ask_approval(ctx, parent, item.action, item.action_text,
                                      Classification(item.action_class, item.reasons, item.sends))
        if not decision.approved:
            return Advanced(None, f"`{item.action_text}` was not allowed")
    action, why = await reach(ctx, parent, item.action)
    if action is None:
        await ctx.trace.progress(f"not running `{item.action_text}`: {why}")
        return Advanced(None, why)
    live = ctx.env.last
    instead = back_within_trajectory(action, tree.lineage(parent.id), live.navigation if live else None)
    if instead is not action:
        # The address is loaded again, not taken from history: it must be as free to load as any link.
        verdict = ctx.classifier.classify(instead, parent.page)
        if not verdict.action_class.runs_freely:
            why = (f"`go_back` here would leave the trajectory (the tab was restored at this page) and "
                   f"`{instead.to_text()}` is {verdict.action_class.value}: not loaded again without asking")
            await ctx.trace.progress(f"not running `{item.action_text}`: {why}")
            return Advanced(None, why)
        await ctx.trace.progress(f"`go_back` in a tab restored at this page: `{instead.to_text()}`, the page before")
        # The tree records what ran, so a replay, the history in prompts and the trace say `goto`.
        action, item = instead, replace(item, action=instead, action_text=instead.to_text())
    # A destructive item runs only once the user approved it: what the approval named may pass the network gate,
    # once; anything else it sends is held and asked about.
    # Where the run is and what it has used are on record before anything is sent: a crash while it runs loses neither.
    await ctx.trace.at(ctx.env.tab_id)
    await ctx.trace.usage(ctx.roles.usage())
    await ctx.trace.action_sent(parent.id, item.action_text, item.action_class, parent.url)
    try:
        outcome = await ctx.env.execute(action, allow=item.sends if destructive else None)
    except BrowserDisconnected:
        outcome = await after_disconnect(ctx, parent, item)
    await ctx.trace.action_result(parent.id, item.action_text, "" if outcome.ok else outcome.error)
    check = post_check(item.action_class, outcome.requests)
    await ctx.trace.post_checked(parent.id, item.action_text, check)
    try:
        view = await ctx.env.observe()
    except SiteRefused as exc:
        # The action ran and led onto a site the user's lists refuse: the step is on record before the run stops.
        refused = tree.add_child(parent.id, Node(id=-1, parent_id=None, depth=0, url="", action=item.action,
                                                 action_text=item.action_text, thought=item.thought, status="dead",
                                                 note=str(exc)))
        ctx.state.current = refused.id
        await ctx.trace.node(refused)
        await ctx.trace.at(ctx.env.tab_id)
        await record_step(ctx, refused, str(exc))
        raise
    child = tree.add_child(parent.id, node_from_view(
        view, parent, action=item.action, action_text=item.action_text, action_locator=item.locator,
        action_class=check.effective_class, thought=item.thought, reward=item.reward, progress=item.progress))
    ctx.state.current = child.id
    await record_step(ctx, child, "" if outcome.ok else outcome.error, outcome)
    changed_site = check.reroots(outcome.ok)
    if not outcome.ok:
        # The page refused the action: the record stays, but nothing is explored from there.
        child.status, child.note = "dead", f"failed: {outcome.error}"
        await ctx.trace.progress(f"`{item.action_text}` failed: {outcome.error}")
    if changed_site:
        tree.reroot(child.id)
        await ctx.trace.progress(f"`{item.action_text}` changed the site: #{child.id} is the new root")
        await ctx.trace.nodes(list(tree))
    elif outcome.ok and recognise_revisits:
        twin = tree.revisit_of(child)
        if twin is not None:
            # The tab shows a state search already has (A -> C -> A): go on from there instead of exploring it twice.
            child.status, child.same_as = "dead", twin.id
            child.note = f"led back to the page of #{twin.id}"
            ctx.state.current = twin.id
            await ctx.trace.progress(f"`{item.action_text}` led back to the page of #{twin.id}; not explored again")
    await ctx.trace.node(child)
    await ctx.trace.at(ctx.env.tab_id)
    return Advanced(child, changed_site=changed_site)


async def after_disconnect(ctx: SearchContext, parent: Node, item: FrontierItem) -> ExecResult:
    """The extension went away while `item` ran (its worker restarted, the connection dropped), so its outcome is
    unknown. Once it is back, the page says: another page than the one it was sent on means it ran; the same page
    means it may not have, and it counts as failed, never sent again (search may propose it anew, and a destructive
    one is then asked about)."""
    await ctx.trace.progress(f"the extension went away while `{item.action_text}` ran; waiting for it to come back")
    view = await settled_view(ctx.env)  # waits for the extension to reconnect (or gives up with the reason)
    if state_key(view.url, view.text) != parent.state:
        await ctx.trace.progress(f"the page changed while the extension was away: `{item.action_text}` ran")
        return ExecResult(True)
    return ExecResult(False, "the extension restarted while it ran and the page is as before: it may not have run, "
                             "and it was not sent again")


def stop_node(ctx: SearchContext, parent: Node, item: FrontierItem) -> Node:
    """The end state of the answer `item` proposes at `parent`: the same page, nothing run."""
    assert isinstance(item.action, Stop)
    return ctx.state.tree.add_child(parent.id, Node(
        id=-1, parent_id=None, depth=0, url=parent.url, title=parent.title, text=parent.text, page=parent.page,
        tabs=parent.tabs, active_tab=parent.active_tab, state=parent.state, action=item.action,
        action_text=item.action_text, action_class=ActionClass.TERMINATING, thought=item.thought,
        reward=item.reward, status="terminal", answer=item.action.answer))


# How well the search must have judged an answer for a run its limit ends to give it: "on the right track" in
# best_first's value terms (action_aware's process reward and mcts's appraisal are on the same 0-1 scale).
LIMIT_ANSWER_SCORE = 0.5


async def answer_found(ctx: SearchContext, why: str) -> SearchOutcome:
    """How a run ends that a limit (time, calls, tokens) stopped mid-search: with the best answer the search had
    found, as Koh et al. commit to the best trajectory found when the budget runs out, if it was judged at least
    LIMIT_ANSWER_SCORE; else failed with `why`. The answers are the stop nodes below the root (scored by their value,
    else their reward) and the stops still waiting in the frontier (their reward). The limit is spent, so the tab is
    not moved: the reason says where the answer was read."""
    tree = ctx.state.tree
    scored: list[tuple[float, int, Node | FrontierItem]] = [
        (n.value if n.value is not None else n.reward or 0.0, -n.id, n) for n in tree
        if n.status == "terminal" and n.answer is not None and tree.is_below_root(n.id)]
    scored += [(item.reward, -item.node_id, item) for item in ctx.state.frontier
               if isinstance(item.action, Stop) and item.node_id in tree.nodes and tree.is_below_root(item.node_id)]
    score, _, best = max(scored, key=lambda entry: entry[:2], default=(0.0, 0, None))
    if best is None or score < LIMIT_ANSWER_SCORE:
        return ctx.failed(f"stopped: {why}")
    end = best if isinstance(best, Node) else stop_node(ctx, tree[best.node_id], best)
    assert end.parent_id is not None
    note = (f"stopped: {why}; answered with the best answer the search had found (#{end.id}, scored {score:.2f}, "
            f"read on #{end.parent_id} {tree[end.parent_id].url})")
    await ctx.trace.progress(note)
    await _record_answer(ctx, end)
    return SearchOutcome("finished", answer=end.answer or "", reason=note)


async def answer_at(ctx: SearchContext, end: Node) -> None:
    """Give the answer of the stop node `end`: the browser goes to the page it was proposed on first, so the tab the
    user is left with shows the page the answer was read from, and the stop is the last step of the trajectory."""
    assert end.parent_id is not None
    parent = ctx.state.tree[end.parent_id]
    _, why = await reach(ctx, parent, None)
    if ctx.state.current != parent.id:
        # The answer stands (the model read it there), but the user is told the tab shows another page.
        await ctx.trace.progress(f"the answer was read on #{parent.id} ({parent.url}), but the tab could not be "
                                 f"brought back there: {why}")
    ctx.state.current = end.id
    await _record_answer(ctx, end)


async def _record_answer(ctx: SearchContext, end: Node) -> None:
    """The stop node `end` on record as the run's last step, its line the chosen trajectory."""
    await ctx.trace.node(end)
    await record_step(ctx, end)
    await ctx.trace.chose([n.id for n in ctx.state.tree.lineage(end.id)])
