"""WebOperator's action-aware best-first search (Alg. 1) over the live working tab.

Each expansion asks several prompt variations for one validated action each, merges equivalent actions, classifies
them (safe, destructive, terminating) and scores them with the checklist reward model *before* anything runs. The
selection policy (Alg. 5) picks the next frontier item; if it belongs to another node, the backtracker moves the browser
there first, and a failed backtrack just drops that item. A destructive action needs the user's approval; once it ran,
its result becomes the new root and the frontier is cleared.
"""

from __future__ import annotations

import asyncio
import logging

from pydantic import BaseModel, ConfigDict, Field

from ..actions import Action, Stop
from ..safety.postcheck import post_check
from .candidates import Candidate, merge_candidates
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
from .examples import RetrievalConfig, examples_block
from .frontier import FrontierItem, SelectionConfig, prune_frontier, select_action
from .generate import GenerationConfig, GenerationInput, generate_candidates
from .rephrase import rephrase
from .reward import RewardConfig, generate_checklist, score_action
from .tree import Node

log = logging.getLogger(__name__)


class ActionAwareConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    # WebOperator's code: max_steps 20, max_depth 20, frontier budget 4 (in SelectionConfig).
    max_steps: int = Field(default=20, ge=1)
    max_depth: int = Field(default=20, ge=1)
    selection: SelectionConfig = SelectionConfig()
    generation: GenerationConfig = GenerationConfig()
    reward: RewardConfig = RewardConfig()
    # Termination "all_agree": a stop counts only when at least this many generators proposed it at the node.
    min_stop_votes: int = Field(default=2, ge=1)
    rephrase: bool = True
    retrieval: RetrievalConfig = RetrievalConfig()


class ActionAwareSearch:
    name = "action_aware"

    def __init__(self, config: ActionAwareConfig | None = None) -> None:
        self.config = config or ActionAwareConfig()

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        return await _Run(self.config, ctx).go()


class _Run:
    def __init__(self, config: ActionAwareConfig, ctx: SearchContext) -> None:
        self.config = config
        self.ctx = ctx
        self.tree = ctx.trace.tree
        self.queue: list[FrontierItem] = []
        self.terminating_count = 0
        self.destruction_count = 0
        self.budget = config.selection.budget
        self.seq = 0
        self.steps = 0
        self.checklist: list[str] = []
        self.rephrased_block = ""

    async def go(self) -> SearchOutcome:
        ctx = self.ctx
        view = await ctx.env.observe()
        current = self.tree.add_root(node_from_view(view))
        ctx.trace.current = current.id
        await ctx.trace.node(current)
        await ctx.trace.progress("writing the task checklist" + (" and rephrasing the task" if self.config.rephrase
                                                                   else ""))
        checklist = generate_checklist(ctx.roles.reward, self.config.reward, ctx.task, view.url, view.text)
        if self.config.rephrase:
            self.checklist, rephrased = await asyncio.gather(checklist, rephrase(ctx.roles.policy, ctx.task))
            self.rephrased_block = rephrased.as_prompt_block()
        else:
            self.checklist = await checklist
        while True:
            if current.status == "open" and current.depth < self.config.max_depth:
                await self.expand(current)
            chosen = await self.choose(current)
            if chosen is None:
                return ctx.failed("no candidate action is left to try")
            item, current, action = chosen
            if item.action_class is ActionClass.TERMINATING:
                return await self.finish(current, item)
            if item.action_class is ActionClass.DESTRUCTIVE and not await self.approved(current, item):
                continue
            if self.steps >= self.config.max_steps:
                return SearchOutcome("failed", reason=f"reached the step limit ({self.config.max_steps}) without an "
                                                      "answer")
            self.steps += 1
            current = await self.execute(current, item, action)

    async def expand(self, node: Node) -> None:
        ctx = self.ctx
        data = GenerationInput(
            task=ctx.task, observation=node.text, url=node.url, history=history_of(ctx, node),
            rephrased_block=self.rephrased_block, space=node.space,
            examples_block=examples_block(ctx.examples.top(ctx.task, node.text)) if ctx.examples else "",
        )
        candidates, failures = await generate_candidates(ctx.roles.policy, data, self.config.generation, node.page,
                                                         ctx.url_check, ctx.secrets)
        for failure in failures:
            await ctx.trace.progress(f"#{node.id}: generator {failure.variation} gave no valid action "
                                     f"({failure.errors[-1]})")
        merged = merge_candidates(candidates)
        if any(isinstance(c.action, Stop) for c in merged):
            self.terminating_count += 1
        kept: list[Candidate] = []
        for candidate in merged:
            if isinstance(candidate.action, Stop) and candidate.count < self.config.min_stop_votes:
                await ctx.trace.progress(f"#{node.id}: `{candidate.action_text}` was proposed by {candidate.count} "
                                         f"generator(s); {self.config.min_stop_votes} must agree to stop")
                continue
            kept.append(candidate)
        trajectory = [n.action_text for n in ctx.trace.tree.lineage(node.id)[1:]]
        scores = await asyncio.gather(*(
            score_action(ctx.roles.reward, self.config.reward, ctx.task, trajectory, node.text, self.checklist,
                         c.thought, c.action_text, node.progress)
            for c in kept
        ))
        classifications = await classify_candidates(ctx, node, [c.action for c in kept])
        for candidate, score, classification in zip(kept, scores, classifications, strict=True):
            # WebOperator sums the scores of merged members; identical members score alike, so score once, times count.
            reward = score.reward * candidate.count
            element_id = candidate.action.element_id
            locator = None
            if element_id is not None and node.page is not None and element_id in node.page.elements:
                locator = node.page.elements[element_id].locator
            self.seq += 1
            self.queue.append(FrontierItem(
                node_id=node.id, action=candidate.action, action_text=candidate.action_text,
                action_class=classification.action_class, reward=reward, thought=candidate.thought,
                locator=locator, reasons=classification.reasons, sends=classification.sends, seq=self.seq,
                progress=score.item_scores,
            ))
            await ctx.trace.classified(node.id, candidate.action_text, classification, candidate.action)
            await ctx.trace.scored(node.id, "reward", reward, score.method, list(score.item_scores))
        node.status = "expanded"
        ctx.trace.frontier = list(self.queue)
        await ctx.trace.node(node)
        await ctx.trace.progress(
            f"#{node.id}: {len(kept)} candidate(s): "
            + "; ".join(f"{i.action_text} [{i.action_class.value}] r={i.reward:.2f}"
                        for i in self.queue if i.node_id == node.id)
        )

    async def choose(self, current: Node) -> tuple[FrontierItem, Node, Action] | None:
        ctx = self.ctx
        while True:
            item, self.queue = select_action(
                self.queue, config=self.config.selection, budget=self.budget,
                terminating_count=self.terminating_count, destruction_count=self.destruction_count,
            )
            if item is None:
                ctx.trace.frontier = []
                return None
            target = self.tree[item.node_id]
            if not self.tree.is_below_root(target.id) or target.status == "invalid":
                continue
            if target.id != current.id and item.action_class is not ActionClass.TERMINATING:
                result = await ctx.backtracker.move(ctx.env, self.tree, target.id, item.action)
                await ctx.trace.backtracked(current.id, target.id, result)
                if result.working_tab_changed:
                    raise LostTrack(f"replay failed and the working tab was left at an unknown page ({result.reason})")
                if not result.committed:
                    continue
                if result.action is None:
                    continue
                current, action = target, result.action
            elif target.id == current.id:
                action = live_action(ctx, current, item.action)
                if action is None:
                    await ctx.trace.progress(f"`{item.action_text}`: its element is gone from the page; dropped")
                    continue
            else:
                action = item.action
            ctx.trace.current = current.id
            if len(self.queue) > self.budget:
                self.queue = prune_frontier(self.queue, budget=self.budget,
                                            reachable=lambda i: self.tree.is_below_root(i.node_id))
            ctx.trace.frontier = list(self.queue)
            return item, current, action

    async def approved(self, node: Node, item: FrontierItem) -> bool:
        decision = await ask_approval(self.ctx, node, item.action, item.action_text,
                                      Classification(item.action_class, item.reasons, item.sends))
        return decision.approved

    async def execute(self, node: Node, item: FrontierItem, action: Action) -> Node:
        ctx = self.ctx
        # A destructive item gets here only once the user approved it: what the approval named may pass the network
        # gate, once; anything else it sends is held and asked about.
        approved = item.sends if item.action_class is ActionClass.DESTRUCTIVE else None
        outcome = await ctx.env.execute(action, allow=approved)
        check = post_check(item.action_class, outcome.requests)
        await ctx.trace.post_checked(node.id, item.action_text, check)
        view = await ctx.env.observe()
        child = self.tree.add_child(node.id, node_from_view(
            view, action=item.action, action_text=item.action_text, action_locator=item.locator,
            action_class=check.effective_class, thought=item.thought, reward=item.reward, progress=item.progress))
        await record_step(ctx, child, "" if outcome.ok else outcome.error)
        if not outcome.ok:
            # The page refused the action: keep the record, but search goes on from the page as it is now.
            child.status = "dead"
            await ctx.trace.progress(f"`{item.action_text}` failed: {outcome.error}")
        if check.reroots(outcome.ok):  # destructive, or what it sent says so
            self.queue.clear()
            self.destruction_count += 1
            self.budget = max(self.budget - 1, self.config.selection.min_budget)
            self.tree.reroot(child.id)
            await ctx.trace.progress(f"`{item.action_text}` changed the site: #{child.id} is the new root")
            await ctx.trace.nodes(list(self.tree))
        ctx.trace.current = child.id
        ctx.trace.frontier = list(self.queue)
        await ctx.trace.node(child)
        # After a failure the working tab shows the child's page; being "dead", it is not expanded again.
        return child

    async def finish(self, node: Node, item: FrontierItem) -> SearchOutcome:
        ctx = self.ctx
        assert isinstance(item.action, Stop)
        end = self.tree.add_child(node.id, Node(
            id=-1, parent_id=None, depth=0, url=node.url, title=node.title, text=node.text, page=node.page,
            tabs=node.tabs, active_tab=node.active_tab, action=item.action, action_text=item.action_text,
            action_class=item.action_class, thought=item.thought, reward=item.reward, status="terminal",
            answer=item.action.answer))
        ctx.trace.current = end.id
        await ctx.trace.node(end)
        await record_step(ctx, end)
        await ctx.trace.chose([n.id for n in ctx.trace.tree.lineage(end.id)])
        return SearchOutcome("finished", answer=item.action.answer)


