"""WebOperator's action-aware best-first search (Alg. 1) over the live working tab.

Each expansion asks several prompt variations for one validated action each, merges equivalent actions, classifies
them (safe, destructive, terminating) and scores them with the checklist reward model *before* anything runs. The
selection policy (Alg. 5) picks the next frontier item and `step.advance` runs it: a destructive action is asked about
first, then the browser is moved to the item's node if needed (a failed replay drops every item waiting there), and
once a destructive action ran, its result becomes the new root and the frontier is cleared. Stops with different
answers stay apart until scored, the best-rewarded is kept, and one too few generators agree on waits in the frontier
until nothing better is left (WebOperator's deferral); the answer is given from the page it was proposed on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from pydantic import BaseModel, ConfigDict, Field

from ..actions import Stop
from ..core.classes import ActionClass
from .candidates import best_stop, merge_candidates
from .context import (
    SearchContext,
    SearchOutcome,
    classify_candidates,
    ensure_examples,
    history_of,
    start_node,
    target_locator,
)
from .examples import RetrievalConfig, examples_block
from .frontier import FrontierItem, SelectionConfig, prune_frontier, select_action
from .generate import GenerationConfig, GenerationInput, generate_candidates
from .rephrase import rephrase
from .reward import RewardConfig, generate_checklist, score_action
from .step import advance, answer_at, stop_node
from .tree import Node
from .validate import unavailable_actions

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
    backtracks = True

    def __init__(self, config: ActionAwareConfig | None = None) -> None:
        self.config = config or ActionAwareConfig()

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        return await _Run(self.config, ctx).go()


class _Run:
    def __init__(self, config: ActionAwareConfig, ctx: SearchContext) -> None:
        self.config = config
        self.ctx = ctx
        self.tree = ctx.state.tree
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
        current = await start_node(ctx)
        # A resumed run has taken the steps of its recorded path already.
        self.steps = current.depth
        await ctx.trace.progress("writing the task checklist" + (" and rephrasing the task" if self.config.rephrase
                                                                   else ""))
        await ensure_examples(ctx, self.config.retrieval)
        checklist = generate_checklist(ctx.roles.reward, self.config.reward, ctx.task, current.url, current.text)
        if self.config.rephrase:
            self.checklist, rephrased = await asyncio.gather(checklist, rephrase(ctx.roles.policy, ctx.task))
            self.rephrased_block = rephrased.as_prompt_block()
        else:
            self.checklist = await checklist
        while True:
            # The page the tab shows: the last state reached, or the earlier node it turned out to repeat.
            current = self.tree[ctx.state.current] if ctx.state.current is not None else current
            if current.status == "open" and current.depth < self.config.max_depth:
                await self.expand(current)
            item = await self.choose()
            if item is None:
                return ctx.failed("no candidate action is left to try")
            parent = self.tree[item.node_id]
            if item.action_class is ActionClass.TERMINATING:
                end = stop_node(ctx, parent, item)
                await answer_at(ctx, end)
                return SearchOutcome("finished", answer=end.answer or "")
            if self.steps >= self.config.max_steps:
                return ctx.failed(f"reached the step limit ({self.config.max_steps}) without an answer")
            step = await advance(ctx, parent, item)
            if step.node is None:
                continue
            self.steps += 1
            if step.changed_site:
                self.queue.clear()
                self.destruction_count += 1
                self.budget = self.config.selection.reduced_budget(self.budget)
            ctx.state.frontier = list(self.queue)

    async def expand(self, node: Node) -> None:
        ctx = self.ctx
        data = GenerationInput(
            task=ctx.task, observation=node.text, url=node.url, history=history_of(ctx, node),
            rephrased_block=self.rephrased_block, space=node.space,
            unavailable=tuple(unavailable_actions(node.page, node.space)),
            examples_block=examples_block(ctx.examples.top(ctx.task, node.text)) if ctx.examples else "",
        )
        # As the run's budget runs low, fewer generators (all of them until half is spent).
        generation = self.config.generation
        generation = generation.model_copy(
            update={"variations": generation.variations[:ctx.budget.scaled(len(generation.variations))]})
        candidates, failures = await generate_candidates(ctx.roles.policy, data, generation, node.page,
                                                         ctx.url_check, ctx.secrets)
        for failure in failures:
            await ctx.trace.progress(f"#{node.id}: generator {failure.variation} gave no valid action "
                                     f"({failure.errors[-1]})")
        merged = merge_candidates(candidates)
        trajectory = [n.action_text for n in ctx.state.tree.lineage(node.id)[1:]]
        # Without logprobs the reward model samples verdicts: fewer as the budget runs low.
        judging = self.config.reward.model_copy(
            update={"n_fallback": ctx.budget.scaled(self.config.reward.n_fallback)})
        scores = await asyncio.gather(*(
            score_action(ctx.roles.reward, judging, ctx.task, trajectory, node.text, self.checklist,
                         c.thought, c.action_text, node.progress)
            for c in merged
        ))
        # WebOperator sums the scores of merged members; identical members score alike, so score once, times count.
        scored = [(dataclasses.replace(c, score=s.reward * c.count), s) for c, s in zip(merged, scores, strict=True)]
        chosen = {id(c) for c in best_stop([c for c, _ in scored])}
        kept = [(c, s) for c, s in scored if id(c) in chosen]
        for candidate, _ in kept:
            if not isinstance(candidate.action, Stop):
                continue
            # Fewer generators asked (a budget running low) need fewer votes.
            if candidate.count >= min(self.config.min_stop_votes, len(generation.variations)):
                self.terminating_count += 1
            else:
                # WebOperator defers a stop too few generators agree on; it runs only if nothing better is left.
                await ctx.trace.progress(f"#{node.id}: `{candidate.action_text}` was proposed by {candidate.count} "
                                         f"generator(s); deferred until {self.config.min_stop_votes} agree")
        classifications = await classify_candidates(ctx, node, [c.action for c, _ in kept])
        ctx.roles.reward.noted("unreadable_verdict", sum(s.method == "unparseable" for _, s in scored))
        for (candidate, score), classification in zip(kept, classifications, strict=True):
            reward = candidate.score
            self.seq += 1
            self.queue.append(FrontierItem(
                node_id=node.id, action=candidate.action, action_text=candidate.action_text,
                action_class=classification.action_class, reward=reward, thought=candidate.thought,
                locator=target_locator(node, candidate.action), reasons=classification.reasons,
                sends=classification.sends, seq=self.seq,
                progress=score.item_scores,
            ))
            await ctx.trace.classified(node.id, candidate.action_text, classification, candidate.action)
            await ctx.trace.scored(node.id, "reward", reward, score.method, list(score.item_scores))
        node.status = "expanded"
        ctx.state.frontier = list(self.queue)
        await ctx.trace.node(node)
        # A reward above 1 is WebOperator's sum over the generators that proposed the same action: say how many.
        await ctx.trace.progress(
            f"#{node.id}: {len(kept)} candidate(s): "
            + "; ".join(f"{c.action_text} [{k.action_class.value}] r={c.score:.2f}"
                        + (f" ({c.count} generators)" if c.count > 1 else "")
                        for (c, _), k in zip(kept, classifications, strict=True))
        )

    async def choose(self) -> FrontierItem | None:
        """The next frontier item by WebOperator's selection policy (Alg. 5), skipping items whose node can no longer
        be reached (re-rooted away, or a replay there already failed). Running it is `step.advance`'s work."""
        while True:
            item, self.queue = select_action(
                self.queue, config=self.config.selection, budget=self.budget,
                terminating_count=self.terminating_count, destruction_count=self.destruction_count,
            )
            if item is None:
                self.ctx.state.frontier = []
                return None
            target = self.tree[item.node_id]
            if not self.tree.is_below_root(target.id) or target.status == "invalid" or target.unreachable:
                continue
            if len(self.queue) > self.budget:
                self.queue = prune_frontier(self.queue, budget=self.budget, reachable=self._reachable)
            self.ctx.state.frontier = list(self.queue)
            return item

    def _reachable(self, item: FrontierItem) -> bool:
        return self.tree.is_below_root(item.node_id) and not self.tree[item.node_id].unreachable
