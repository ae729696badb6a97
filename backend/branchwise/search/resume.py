"""Resume: an interrupted run goes on from where its record says the working tab was.

The recorded path (root to the node the tab showed) comes back as the tree's history: the prompts show its actions as
before, new nodes get ids after every recorded one, and search starts again at the page the tab shows now. Pages of
the recorded nodes are text only, so nothing before that page is replayed or searched again.

An action sent and never answered (the backend stopped while it ran) is judged by the page, never run again blindly:
- the tab shows another page than the one it was sent on: it ran, and what the tab shows is its result;
- the tab shows the same page: it may or may not have run (a request can reach a server whose answer never came), so
  the user is asked whether to run it once more; without a yes, search goes on from that page without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..actions import SECRET_MASK, Action, ActionParseError, parse_action
from ..agent.env import EnvView
from ..core.classes import ActionClass, Classification
from ..core.status import BacktrackMode
from ..safety.secrets import mask_task
from ..store import NodeRecord, StoredRun
from .context import SearchContext, ask_approval, node_from_view, record_step
from .frontier import FrontierItem
from .grounding import numbers_in
from .snapshot import settled_view, state_key
from .step import advance
from .tree import Node, SearchTree
from .validate import ActionSpace

# Why the user is asked before an action of unknown outcome runs again.
AGAIN_REASON = ("it was sent just before the backend stopped, and the page still looks as it did before: it may or "
                "may not have run, so running it again could do it twice")

Verdict = Literal["same", "moved", "ran", "unchanged"]


class Unresumable(Exception):
    """The run cannot be resumed; the message says why and what to do instead."""


@dataclass(frozen=True)
class ResumePoint:
    """Where an interrupted run stopped: the tab, the node whose page it showed, and the action then in flight."""

    stored: StoredRun
    tab_id: int
    node_id: int
    # The action sent at `node_id` with no result on record (its outcome is unknown), as it was written.
    unfinished: str | None = None
    unfinished_class: ActionClass | None = None

    @property
    def backtrack(self) -> BacktrackMode:
        """How the run went back to earlier states (speculative when it never did)."""
        return "naive" if self.stored.run.backtrack_mode == "naive" else "speculative"


def resume_point(stored: StoredRun, task: str | None = None) -> ResumePoint:
    """Where `stored` can go on from; Unresumable with the reason when it cannot. `task`: the task as the user typed
    it again, needed when the stored one has secrets masked (they are never stored)."""
    run = stored.run
    if run.status != "interrupted":
        raise Unresumable(f"run {run.run_id} is {run.status}: only an interrupted run can be resumed")
    if task is not None and mask_task(task) != run.task:
        raise Unresumable(f"the task given is not the one run {run.run_id} was started with ({run.task!r})")
    if SECRET_MASK in run.task and task is None:
        raise Unresumable("the task had a password or card number in it, which is never stored: give the task again "
                          "(--task), written as the first time")
    if run.tab_id is None or not stored.nodes:
        raise Unresumable(f"run {run.run_id} stopped before it had looked at its page: start it again instead")
    sent = stored.unfinished_action
    known = {n.node_id for n in stored.nodes}
    if sent is not None and sent.node_id in known:
        return ResumePoint(stored, run.tab_id, sent.node_id, sent.action_text,
                           ActionClass(sent.action_class) if sent.action_class else None)
    node_id = run.current_node if run.current_node in known else max(known)
    return ResumePoint(stored, run.tab_id, node_id)


def require_open_tab(point: ResumePoint, open_tabs: set[int]) -> None:
    """Unresumable unless the tab the run worked in is among `open_tabs`."""
    if point.tab_id not in open_tabs:
        raise Unresumable(f"the tab it worked in is closed or was taken back: there is nothing to resume run "
                          f"{point.stored.run.run_id} in; start the task again")


def recorded_path(stored: StoredRun, node_id: int) -> list[NodeRecord]:
    """The recorded nodes from the run's first one down to node_id."""
    by_id = {n.node_id: n for n in stored.nodes}
    chain = [by_id[node_id]]
    while chain[-1].parent_id is not None and chain[-1].parent_id in by_id and len(chain) <= len(by_id):
        chain.append(by_id[chain[-1].parent_id])
    return chain[::-1]


def restored_tree(point: ResumePoint) -> SearchTree:
    """The recorded path as a tree ending at the resume node (its root): history for the prompts, not for search."""
    tree = SearchTree()
    tree.first_free = max(n.node_id for n in point.stored.nodes) + 1
    previous: Node | None = None
    seen = numbers_in(point.stored.run.task)
    for record in recorded_path(point.stored, point.node_id):
        # The numbers its pages showed: an answer on from here may give them (validate.ActionSpace.seen_numbers).
        seen |= numbers_in(record.observation_text)
        node = Node(id=record.node_id, parent_id=record.parent_id, depth=record.depth, url=record.url,
                    title=record.title, text=record.observation_text, action_text=record.action_text,
                    action_class=ActionClass(record.action_class) if record.action_class else None,
                    thought=record.thought, reward=record.reward, value=record.value, checkpoint=record.checkpoint,
                    status=record.status, note=record.note, answer=record.answer,
                    state=state_key(record.url, record.observation_text), space=ActionSpace(seen_numbers=seen))
        if record.action_text:
            try:
                node.action = parse_action(record.action_text)
            except ActionParseError:
                node.action = None  # an invalid step on record: its text is history enough
        tree.nodes[node.id] = node
        if previous is not None:
            previous.children.append(node.id)
        previous = node
    tree.root_id = point.node_id
    return tree


def verdict(point: ResumePoint, node: Node, view: EnvView) -> Verdict:
    """What the page the tab shows now says about the run: its node's page as recorded (`same`) or not (`moved`);
    with an action in flight, that the action ran (`ran`) or that the page is unchanged (`unchanged`)."""
    same = state_key(view.url, view.text) == node.state
    if point.unfinished is None:
        return "same" if same else "moved"
    return "unchanged" if same else "ran"


def rebind(node: Node, view: EnvView) -> None:
    """The node shows the live page (the same page as recorded, freshly read: its elements) from now on, to be
    expanded again."""
    live = node_from_view(view, node)
    node.url, node.title, node.text, node.page = live.url, live.title, live.text, live.page
    node.tabs, node.active_tab, node.space, node.state = live.tabs, live.active_tab, live.space, live.state
    node.status = "open"


async def resume_into(ctx: SearchContext, point: ResumePoint) -> None:
    """Seed the run's state from the record and the live tab, settling the action in flight first. Search then starts
    at `ctx.state.current` (context.start_node)."""
    tree = restored_tree(point)
    ctx.state.tree = tree
    ctx.trace.already_stored(list(tree.nodes))
    node = tree[point.node_id]
    ctx.step_base = node.depth  # steps are numbered on from the recorded ones
    view = await settled_view(ctx.env)
    seen = verdict(point, node, view)
    if seen == "ran":
        assert point.unfinished is not None
        child = tree.add_child(node.id, node_from_view(
            view, node, action=_parsed(point.unfinished), action_text=point.unfinished,
            action_class=point.unfinished_class))
        tree.root_id = ctx.state.current = child.id
        await ctx.trace.progress(f"resumed: `{point.unfinished}` had been sent before the backend stopped and the "
                                 f"page has changed since, so it ran; going on from #{child.id} ({child.url})")
        # The step is on record before the action is marked done: a crash in between judges it again, never loses it.
        await ctx.trace.node(child)
        await ctx.trace.at(ctx.env.tab_id)
        await ctx.trace.action_result(node.id, point.unfinished, "", note="done (judged on resume: the page changed "
                                                                          "since it was sent)")
        await record_step(ctx, child)
        return
    if seen == "moved":
        # Another page than the record's: a node of its own (no action led there), so the record of #node stays true.
        here = tree.add_child(node.id, node_from_view(view, node, thought="the run was resumed here"))
        here.depth = node.depth  # no step was taken
        tree.root_id = ctx.state.current = here.id
        await ctx.trace.node(here)
        await ctx.trace.progress(f"resumed: the tab no longer shows the page of #{node.id} ({node.url}); going on "
                                 f"from what it shows, #{here.id} ({view.url})")
        return
    rebind(node, view)
    ctx.state.current = node.id
    await ctx.trace.node(node)
    if seen == "same":
        await ctx.trace.progress(f"resumed at #{node.id} ({node.url})")
    else:
        await _again(ctx, point, node)


async def _again(ctx: SearchContext, point: ResumePoint, node: Node) -> None:
    """The page is as it was when the unfinished action was sent: run it again only if the user says so."""
    assert point.unfinished is not None
    text = point.unfinished
    action = _parsed(text)
    action_class = point.unfinished_class or ActionClass.SAFE
    await ctx.trace.progress(f"resumed at #{node.id}: `{text}` had been sent before the backend stopped, and the page "
                             "looks unchanged")
    if action is None or SECRET_MASK in text:
        await ctx.trace.action_result(node.id, text, "", note="not run again on resume: it cannot be rebuilt from "
                                                              "the record")
        await ctx.trace.progress(f"not running `{text}` again: it cannot be rebuilt from the record (a typed secret "
                                 "is never stored); search goes on from this page")
        return
    reasons = (AGAIN_REASON,)
    item = FrontierItem(node_id=node.id, action=action, action_text=text, action_class=action_class, reward=0.0,
                        reasons=reasons)
    # A destructive action is asked about by the step itself (once); any other is asked about here.
    approved = True
    if action_class is not ActionClass.DESTRUCTIVE:
        approved = (await ask_approval(ctx, node, action, text, Classification(action_class, reasons))).approved
    ran = approved and (await advance(ctx, node, item)).node is not None
    if not ran:
        # On record as settled, so a later resume does not ask again.
        await ctx.trace.action_result(node.id, text, "", note="not run again on resume")
        await ctx.trace.progress(f"`{text}` was not run again; search goes on from this page")


def _parsed(text: str) -> Action | None:
    try:
        return parse_action(text)
    except ActionParseError:
        return None
