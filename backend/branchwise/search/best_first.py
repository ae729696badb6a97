"""Best-first tree search with a value function (Koh et al., "Tree Search for Language Model Agents").

A round searches from the current root: pop the frontier's best state, move the browser there (executing the action
that leads to it), score it with the value function (self-consistency over n samples), stop at the threshold or when
the budget of scored states is spent, else sample candidate actions and push the top-b by count as children with the
parent's value as priority. Then the browser commits to the best state found; a stop there is the answer, otherwise
the next round searches from it.
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ..actions import Action, ActionParseError, Stop, parse_response
from ..safety.postcheck import post_check
from ..policy.prompts import PromptConfig, build_cot_messages
from .candidates import Candidate, top_by_count
from .classes import ActionClass, Classification
from .context import (
    LostTrack,
    SearchContext,
    SearchOutcome,
    ask_approval,
    classify_candidates,
    history_of,
    live_action,
    node_from_view,
    record_step,
)
from .generate import history_text
from .tree import Node
from .validate import validate_action
from .value import ValueConfig, score_state

log = logging.getLogger(__name__)


class BestFirstConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    # The paper's defaults: depth d = 5, branching b = 5, budget c = 20, threshold θ = 1.0, 20 sampled candidates.
    max_depth: int = Field(default=5, ge=1)
    branching: int = Field(default=5, ge=1)
    budget: int = Field(default=20, ge=1)
    threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    candidates: int = Field(default=20, ge=1)
    temperature: float = 1.0
    # Rounds of search-then-commit before giving up.
    max_rounds: int = Field(default=5, ge=1)
    history: int = Field(default=5, ge=0)
    value: ValueConfig = ValueConfig()
    prompt: PromptConfig = PromptConfig()


@dataclass
class _RunNotes:
    """Per run: the classifier's verdict on each child (the user is shown its reasons when asked)."""

    classifications: dict[int, Classification] = field(default_factory=dict)


@dataclass(frozen=True)
class _Materialized:
    # The node shows the page its action led to, and can be scored and expanded.
    usable: bool
    # What ran changed the site: there is no way back, search goes on from this node only.
    changed_site: bool = False


class BestFirstSearch:
    name = "best_first"

    def __init__(self, config: BestFirstConfig | None = None) -> None:
        self.config = config or BestFirstConfig()

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        tree = ctx.trace.tree
        view = await ctx.env.observe()
        root = tree.add_root(node_from_view(view))
        ctx.trace.current = root.id
        await ctx.trace.node(root)
        notes = _RunNotes()
        for round_index in range(1, self.config.max_rounds + 1):
            await ctx.trace.progress(f"search round {round_index} from #{root.id}")
            best = await self._round(ctx, root, notes)
            await ctx.trace.chose([n.id for n in ctx.trace.tree.lineage(best.id)])
            if best.status == "terminal":
                return SearchOutcome("finished", answer=best.answer or "")
            if best.id == root.id:
                return ctx.failed("search found no state better than where it started")
            if ctx.trace.current != best.id:
                result = await ctx.backtracker.move(ctx.env, tree, best.id, None)
                await ctx.trace.backtracked(ctx.trace.current or root.id, best.id, result)
                if not result.committed:
                    return SearchOutcome("failed", reason=f"could not return to the best state: {result.reason}")
                ctx.trace.current = best.id
            tree.reroot(best.id)
            root = best
            root.status = "open"
            await ctx.trace.nodes(list(tree))
        return SearchOutcome("failed", reason=f"no answer after {self.config.max_rounds} search rounds")

    async def _round(self, ctx: SearchContext, root: Node, notes: _RunNotes) -> Node:
        tree = ctx.trace.tree
        frontier: list[tuple[float, float, int]] = [(-0.0, 0.0, root.id)]
        best, best_value, scored = root, -1.0, 0
        while frontier and scored < self.config.budget:
            _, _, node_id = heapq.heappop(frontier)
            node = tree[node_id]
            if node.status == "open" and node.page is None and node.action is not None:
                done = await self._materialize(ctx, node, notes)
                if done.changed_site:  # even when the action then failed
                    tree.reroot(node.id)
                    root, best, best_value = node, node, -1.0
                    frontier.clear()
                    await ctx.trace.progress(f"`{node.action_text}` changed the site: #{node.id} is the new root")
                    await ctx.trace.nodes(list(tree))
                if not done.usable:
                    continue
            value = await score_state(ctx.roles.value, self.config.value, ctx.task, node.text, node.url,
                                      [n.action_text for n in ctx.trace.tree.lineage(node.id)[1:]], node.answer)
            node.value = value.value
            scored += 1
            await ctx.trace.scored(node.id, "value", value.value, "self-consistency",
                                   [s for s in value.samples if s is not None])
            await ctx.trace.node(node)
            await ctx.trace.progress(f"#{node.id} {node.action_text or '(start)'}: value {value.value:.2f} "
                                     f"({value.parsed}/{len(value.samples)} verdicts readable)")
            if value.value > best_value:
                best, best_value = node, value.value
            if value.value >= self.config.threshold or node.status == "terminal":
                if value.value >= self.config.threshold:
                    break
                continue
            if node.depth - root.depth >= self.config.max_depth:
                continue
            for child, share in await self._children(ctx, node, notes):
                heapq.heappush(frontier, (-value.value, -share, child.id))
            node.status = "expanded"
            await ctx.trace.node(node)
        return best

    async def _children(self, ctx: SearchContext, node: Node, notes: _RunNotes) -> list[tuple[Node, float]]:
        messages = build_cot_messages(ctx.task, node.text, node.url,
                                      history_text(history_of(ctx, node), self.config.history),
                                      config=self.config.prompt)
        completion = await ctx.roles.policy.complete(messages, n=self.config.candidates,
                                                     temperature=self.config.temperature)
        samples: list[Candidate] = []
        for text in completion.texts:
            try:
                parsed = parse_response(text)
            except ActionParseError:
                continue
            action, thought = ctx.secrets.seal(parsed.action, parsed.thought, node.page)
            if validate_action(action, node.page, node.space) is None:
                samples.append(Candidate(action, action.to_text(), thought))
        children: list[tuple[Node, float]] = []
        top = top_by_count(samples, self.config.branching)
        classifications = await classify_candidates(ctx, node, [candidate.action for candidate, _ in top])
        for (candidate, share), classification in zip(top, classifications, strict=True):
            await ctx.trace.classified(node.id, candidate.action_text, classification, candidate.action)
            child = ctx.trace.tree.add_child(node.id, Node(
                id=-1, parent_id=None, depth=0, url=node.url, action=candidate.action,
                action_text=candidate.action_text, action_class=classification.action_class,
                thought=candidate.thought, reward=share))
            notes.classifications[child.id] = classification
            children.append((child, share))
            await ctx.trace.node(child)
        await ctx.trace.progress(f"#{node.id}: {len(samples)}/{len(completion.texts)} usable samples; branching on "
                                 + "; ".join(f"{c.action_text} ({s:.0%})" for c, s in children))
        return children

    async def _materialize(self, ctx: SearchContext, node: Node, notes: _RunNotes) -> _Materialized:
        """Run the action that leads to `node` from its parent; not usable when it cannot or must not run, or failed."""
        tree = ctx.trace.tree
        assert node.parent_id is not None and node.action is not None
        parent = tree[node.parent_id]
        if isinstance(node.action, Stop):
            node.text, node.page, node.title, node.tabs = parent.text, parent.page, parent.title, parent.tabs
            node.status, node.answer = "terminal", node.action.answer
            return _Materialized(True)
        classification = notes.classifications.get(node.id, Classification(ActionClass.DESTRUCTIVE))
        if node.action_class is ActionClass.DESTRUCTIVE:
            decision = await ask_approval(ctx, parent, node.action, node.action_text, classification)
            if not decision.approved:
                node.status = "dead"
                await ctx.trace.node(node)
                return _Materialized(False)
        action: Action | None
        if ctx.trace.current != parent.id:
            result = await ctx.backtracker.move(ctx.env, tree, parent.id, node.action)
            await ctx.trace.backtracked(ctx.trace.current if ctx.trace.current is not None else parent.id,
                                        parent.id, result)
            if result.working_tab_changed:
                raise LostTrack(f"replay failed and the working tab was left at an unknown page ({result.reason})")
            if not result.committed:
                node.status = "dead"
                await ctx.trace.node(node)
                return _Materialized(False)
            action = result.action
        else:
            action = live_action(ctx, parent, node.action)
        if action is None:
            node.status = "dead"
            await ctx.trace.node(node)
            return _Materialized(False)
        # A destructive node gets here only once the user approved it: what the approval named may pass the network
        # gate, once; anything else it sends is held and asked about.
        approved = classification.sends if node.action_class is ActionClass.DESTRUCTIVE else None
        outcome = await ctx.env.execute(action, allow=approved)
        check = post_check(node.action_class or ActionClass.SAFE, outcome.requests)
        await ctx.trace.post_checked(parent.id, node.action_text, check)
        node.action_class = check.effective_class
        view = await ctx.env.observe()
        fresh = node_from_view(view)
        node.url, node.title, node.text, node.page = fresh.url, fresh.title, fresh.text, fresh.page
        node.space = fresh.space
        node.tabs, node.active_tab = fresh.tabs, fresh.active_tab
        ctx.trace.current = node.id
        await record_step(ctx, node, "" if outcome.ok else outcome.error)
        changed_site = check.reroots(outcome.ok)
        if not outcome.ok:
            node.status = "dead"
            await ctx.trace.node(node)
            return _Materialized(False, changed_site)
        return _Materialized(True, changed_site)
