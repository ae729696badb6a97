"""Best-first tree search with a value function (Koh et al., "Tree Search for Language Model Agents").

A round searches from the current root: pop the frontier's best proposal, run it (`step.advance`, backtracking first if
it was proposed elsewhere), score the state it leads to with the value function (self-consistency over n samples),
then sample the policy there and push the top-b proposals by count with that state's value as priority. A round ends
at the threshold or when the budget of c scored states is spent; then the browser commits to the best state found and
the next round searches from it.

Where this departs from a literal reading of the paper, and why:
- A state scored as success is expanded too, so the policy can say `stop [answer]` there: the answer comes from the
  policy at that state, not from the value function (which may call an information page a success before anything was
  answered).
- A proposed stop is a state of its own (the page plus the answer), scored with the answer.
- Destructive proposals are never run while exploring (the paper excludes them from search); one runs, with the user's
  approval, only when it is the policy's first choice at the best state found and no other move there did better.
- Values are kept: a state is scored once, whatever the round, and a page reached again is not explored twice.
- When no state is judged better than the root (values tie, or the root was wrongly judged a success), the browser
  follows the policy's first choices through the explored states, as a greedy agent would: search should not do worse
  than the policy's own first choice where the value function cannot tell better from worse. When they end in an answer
  valued above 0 (not every verdict rejected it; an unreadable verdict counts as a rejection), it is given, whatever the
  pages on the way were valued and whatever the start was: with Qwen2.5-Coder-1.5B judging, task 3002's page with the
  answer was valued 0.0 (the start 0.2) and the right answer 0.2 in one run, the answer alone 0.1 against the start's
  0.2 in another, where every policy sample proposed it and greedy gave it. A small model's values differ by one verdict
  in five from state to state; only a unanimous rejection says something. Otherwise the browser goes only as far as the
  way is judged on track. Unless the value function told no two states apart (every one valued the same, 0.0 in the
  1.5B model's runs of tasks 2002 and 3003, where it rejected the right answer `18` as it rejected every page): then its
  rejection says nothing of the answer, the way is followed to its end and its answer given, as greedy would.
- A round that ends where it began with nothing left to try there asks the policy at the root once more before the
  run gives up, told which of its actions were tried: a fresh search per step, as in the paper, not a run that ends
  with most of its budget left because a small model's few proposals all led back to the same page (the 1.5B model's
  runs of 2003 and 2002 stopped so after 20 and 30 of their 60 calls; greedy, told its action changed nothing, goes on).
- A run that would end with nothing (no state better than the root, the step or round limit) gives the best answer
  found instead, if one was judged at least on track on average: a question answered "on track" beats no answer.
"""

from __future__ import annotations

import heapq
import logging

from pydantic import BaseModel, ConfigDict, Field

from ..actions import ActionParseError, Stop, parse_response
from ..core.classes import ActionClass
from ..policy.prompts import PromptConfig, build_cot_messages
from .candidates import Candidate, top_by_count
from .context import (
    SearchContext,
    SearchOutcome,
    classify_candidates,
    ensure_examples,
    policy_history,
    start_node,
    target_locator,
    with_examples,
)
from .examples import RetrievalConfig
from .frontier import FrontierItem
from .meant import proposed
from .step import advance, answer_at, reach, stop_node
from .tree import Node
from .validate import unavailable_actions, validate_action
from .value import ON_TRACK_VALUE, ValueConfig, score_state

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
    # Actions committed to (exploring and replays aside) before giving up; checked before each round, so a round may
    # commit up to max_depth more. Exploring is bounded by the budget and the rounds, as in the paper.
    max_steps: int = Field(default=20, ge=1)
    history: int = Field(default=5, ge=0)
    value: ValueConfig = ValueConfig()
    prompt: PromptConfig = PromptConfig()
    # With --examples: the retrieved steps shown in every policy prompt.
    retrieval: RetrievalConfig = RetrievalConfig()


class BestFirstSearch:
    name = "best_first"
    backtracks = True

    def __init__(self, config: BestFirstConfig | None = None) -> None:
        self.config = config or BestFirstConfig()

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        return await _Run(self.config, ctx).go()


# Frontier entries: highest parent value first, then the most often sampled, then the oldest.
_Entry = tuple[float, float, int, FrontierItem]


class _Run:
    def __init__(self, config: BestFirstConfig, ctx: SearchContext) -> None:
        self.config = config
        self.ctx = ctx
        self.tree = ctx.state.tree
        # The proposals of each expanded node that have not run yet (destructive ones wait here until
        # `_needed_destructive` runs one).
        self.proposals: dict[int, list[FrontierItem]] = {}
        # The policy's most proposed action at each expanded node, and the state each proposal led to (by its seq).
        self.first_choice: dict[int, FrontierItem] = {}
        self.led_to: dict[int, int] = {}
        self.seq = 0
        # What was taken at each state (run, or asked about and refused), each action once, in order; and the states
        # where the policy was asked again (once each), told what had been taken there.
        self.taken: dict[int, dict[str, None]] = {}
        self.asked_again: set[int] = set()

    async def go(self) -> SearchOutcome:
        ctx, tree = self.ctx, self.tree
        root = await start_node(ctx)
        if ctx.use_examples:
            await ensure_examples(ctx, self.config.retrieval)
        for round_index in range(1, self.config.max_rounds + 1):
            if root.depth >= self.config.max_steps:
                return await self._give_up(self._why_stuck(root))
            await ctx.trace.progress(f"search round {round_index} from #{root.id}")
            found = await self._round(root)
            root = tree[tree.root_id]
            if found.status == "terminal":
                await answer_at(ctx, found)
                return SearchOutcome("finished", answer=found.answer or "")
            if found.id == root.id:
                found = self._policy_path(root)
                if found.status == "terminal":
                    await answer_at(ctx, found)
                    alike = self._alike()
                    return SearchOutcome("finished", answer=found.answer or "",
                                         reason=f"no state was judged better than #{root.id}; gave the answer the "
                                                "policy proposed first along its preferred path"
                                                + (f" (every state was valued {alike:.2f}: the value function told "
                                                   "none apart)" if alike is not None else ""))
                if found.id == root.id:
                    moved = await self._needed_destructive(root)
                    if moved is None:
                        if await self._look_again(root):
                            continue
                        return await self._give_up(self._why_stuck(root))
                    root = moved
                    continue
                await ctx.trace.progress(f"no state was judged better than #{root.id}: following the policy's first "
                                         f"choices to #{found.id}")
            _, why = await reach(ctx, found, None)
            if ctx.state.current != found.id:
                return await self._give_up(f"could not return to the best state #{found.id}: {why}")
            tree.reroot(found.id)
            root = found
            await ctx.trace.chose([n.id for n in tree.lineage(found.id)])
            await ctx.trace.nodes(list(tree))
        return await self._give_up(f"no answer after {self.config.max_rounds} search rounds")

    async def _give_up(self, why: str) -> SearchOutcome:
        """End without a success: with the best answer found, if the value function judged it at least on track on
        average (the user asked a question, and such an answer beats none), else failed with `why`. Only answers read
        below the current root count: the tree keeps no way back above it."""
        answers = [n for n in self.tree if n.status == "terminal" and _value(n) >= ON_TRACK_VALUE
                   and self.tree.is_below_root(n.id)]
        if not answers:
            return self.ctx.failed(why)
        end = max(answers, key=lambda n: (_value(n), n.reward, -n.id))
        note = (f"{why}; answering with the best answer found, #{end.id} (value {_value(end):.2f}, below the "
                f"threshold {self.config.threshold:.2f})")
        await self.ctx.trace.progress(note)
        await answer_at(self.ctx, end)
        return SearchOutcome("finished", answer=end.answer or "", reason=note)

    async def _round(self, root: Node) -> Node:
        """One best-first search from `root`: a stop state at the threshold, or the best state found."""
        tree, config = self.tree, self.config
        heap: list[_Entry] = []
        scored = 0
        if root.value is None:
            await self._score(root)
            scored += 1
        best = root
        end = await self._consider(root, root, heap, expand=scored < config.budget)
        while end is None and heap and scored < config.budget:
            *_, item = heapq.heappop(heap)
            parent = tree[item.node_id]
            if not tree.is_below_root(parent.id) or parent.unreachable:
                continue
            if isinstance(item.action, Stop):
                self._ran(item)
                stop = stop_node(self.ctx, parent, item)
                self.led_to[item.seq] = stop.id
                await self._score(stop)
                scored += 1
                if _value(stop) >= config.threshold:
                    return stop
                if _value(stop) > _value(best):
                    best = stop  # the best trajectory found may end in an answer judged below the threshold
                continue
            if item.action_class is ActionClass.DESTRUCTIVE:
                continue  # kept in `proposals`: run only if the best state needs it
            self._ran(item)
            step = await advance(self.ctx, parent, item)
            if step.changed_site:
                assert step.node is not None
                root = best = step.node
                heap.clear()
            child = step.node
            if child is not None:
                self.led_to[item.seq] = child.id
            # A failed action is a dead end, unless what it sent changed the site: then it is where search goes on.
            if child is None or (child.status == "dead" and not step.changed_site):
                continue
            await self._score(child)
            scored += 1
            if _value(child) > _value(best):
                best = child
            end = await self._consider(child, root, heap, expand=scored < config.budget)
        self.ctx.state.frontier = [i for items in self.proposals.values() for i in items
                                   if tree.is_below_root(i.node_id)]
        return end or best

    async def _consider(self, node: Node, root: Node, heap: list[_Entry], *, expand: bool) -> Node | None:
        """Expand a scored node: always at the threshold (the policy may stop there), otherwise while the budget can
        still score its children and the depth allows. Returns the stop state when the policy answers at a success
        (its most proposed action is a stop)."""
        success = _value(node) >= self.config.threshold
        if not success and not (expand and node.depth - root.depth < self.config.max_depth):
            return None
        items = await self._expand(node)
        top = max(items, key=lambda i: i.reward, default=None)
        if success and top is not None and isinstance(top.action, Stop):
            # The page is judged done and the policy's most proposed action is to answer there: that answer is the
            # result (B1). A stop only a few samples propose waits in the frontier like any other proposal: a value
            # judged a success by mistake must not end the run with a stray answer.
            best = top
            self._ran(best)
            await self.ctx.trace.progress(f"#{node.id} is judged a success and the policy answers there")
            return stop_node(self.ctx, node, best)
        for item in items:
            heapq.heappush(heap, (-_value(node), -item.reward, item.seq, item))
        return None

    async def _expand(self, node: Node) -> list[FrontierItem]:
        """The policy's top-b proposals at `node` by count (sampled once per node), less those already run."""
        if node.id in self.proposals:
            return list(self.proposals[node.id])
        ctx = self.ctx
        prompt = self.config.prompt.fitted(ctx.roles.policy.config)
        history = policy_history(ctx, node, self.config.history, prompt)
        objective = with_examples(ctx, ctx.task, node.text, prompt)
        tried = list(self.taken.get(node.id, {})) if node.id in self.asked_again else []
        messages = build_cot_messages(objective, node.text, node.url, history, config=prompt,
                                      unavailable=unavailable_actions(node.page, node.space)
                                      + [f"{text} (tried here already)" for text in tried])
        # As the run's budget runs low, fewer samples and branches (all of them until half is spent).
        completion = await ctx.roles.policy.complete(messages, n=ctx.budget.scaled(self.config.candidates),
                                                     temperature=self.config.temperature)
        samples: list[Candidate] = []
        policy = ctx.roles.policy
        space = node.space
        for text in completion.texts:
            try:
                parsed = parse_response(text)
            except ActionParseError:
                policy.noted("unparseable")
                continue
            action, thought = proposed(parsed, node.page, ctx.secrets, policy)
            if action.to_text() in tried:
                continue  # where it leads is known: a revisit, a failure, or a state no better than this one
            refusal = validate_action(action, node.page, space)
            if refusal is None:
                samples.append(Candidate(action, action.to_text(), thought))
            else:
                policy.noted(refusal.kind)
                if isinstance(action, Stop):
                    # An answer with a number no page showed counts from its second sample on: the model may have
                    # counted it, and one sample of several is not the model insisting. Here only, not below.
                    space = space.with_seen(action.answer)
        top = top_by_count(samples, ctx.budget.scaled(self.config.branching))
        classifications = await classify_candidates(ctx, node, [candidate.action for candidate, _ in top])
        items: list[FrontierItem] = []
        for (candidate, share), classification in zip(top, classifications, strict=True):
            await ctx.trace.classified(node.id, candidate.action_text, classification, candidate.action)
            self.seq += 1
            items.append(FrontierItem(
                node_id=node.id, action=candidate.action, action_text=candidate.action_text,
                action_class=classification.action_class, reward=share, thought=candidate.thought,
                locator=target_locator(node, candidate.action),
                reasons=classification.reasons, sends=classification.sends, seq=self.seq))
        self.proposals[node.id] = items
        if items:
            self.first_choice[node.id] = max(items, key=lambda i: (i.reward, -i.seq))
        node.status = "expanded"
        await ctx.trace.node(node)
        await ctx.trace.progress(f"#{node.id}: {len(samples)}/{len(completion.texts)} usable samples; branching on "
                                 + "; ".join(f"{i.action_text} [{i.action_class.value}] ({i.reward:.0%})"
                                             for i in items))
        return list(items)

    async def _needed_destructive(self, node: Node) -> Node | None:
        """Nothing safe did better than `node` and the policy's first choice there is destructive: run it, if the user
        allows it. Returns the state it led to (the new root), or None."""
        choice = self.first_choice.get(node.id)
        if (choice is None or choice.action_class is not ActionClass.DESTRUCTIVE
                or choice not in self.proposals.get(node.id, [])):
            return None
        self._ran(choice)
        step = await advance(self.ctx, node, choice)
        return step.node if step.node is not None and step.changed_site else None

    async def _score(self, node: Node) -> None:
        ctx = self.ctx
        # The value's samples thin out with the budget too (a run near its limit would otherwise stop dead here).
        judging = self.config.value.model_copy(update={"n": ctx.budget.scaled(self.config.value.n)})
        value = await score_state(ctx.roles.value, judging, ctx.task, node.text, node.url,
                                  [n.action_text for n in self.tree.lineage(node.id)[1:]], node.answer)
        node.value = value.value
        ctx.roles.value.noted("unreadable_verdict", len(value.samples) - value.parsed)
        await ctx.trace.scored(node.id, "value", value.value, "self-consistency",
                               [s for s in value.samples if s is not None])
        await ctx.trace.node(node)
        await ctx.trace.progress(f"#{node.id} {node.action_text or '(start)'}: value {value.value:.2f} "
                                 f"({value.parsed}/{len(value.samples)} verdicts readable)")

    def _policy_path(self, root: Node) -> Node:
        """Where the policy's first choice at each state leads through the explored tree, from `root`: what a greedy
        agent would have done, for when the value function found nothing better than the start (identical verdicts,
        or a start page wrongly judged a success). All the way to an answer valued above 0 (not every verdict rejected
        it); else only while the way is judged at least on track (a page judged off track is not worth committing the
        browser to, and an answer judged on track elsewhere is still given by `_give_up`). Where every state was valued
        alike, all the way, whatever the value: it said nothing about any of them."""
        path = self._first_choices(root)
        alike = self._alike() is not None
        if path[-1].status == "terminal" and (_value(path[-1]) > 0 or alike):
            return path[-1]
        node = root
        for child in path[1:]:
            if child.status == "terminal" or (_value(child) < ON_TRACK_VALUE and not alike):
                break
            node = child
        return node

    def _alike(self) -> float | None:
        """The one value every scored state of the run got, if the value function told none apart; else None."""
        values = {n.value for n in self.tree if n.value is not None}
        return values.pop() if len(values) == 1 else None

    def _first_choices(self, root: Node) -> list[Node]:
        """`root` and the explored states the policy's first choices lead to from it, up to an answer or a state whose
        first choice did not run (destructive, a revisit, a failed action, never reached)."""
        path = [root]
        while (choice := self.first_choice.get(path[-1].id)) is not None and path[-1].status != "terminal":
            child = self.tree[self.led_to[choice.seq]] if choice.seq in self.led_to else None
            if child is None or child.unreachable or child.status in ("dead", "invalid") or child.value is None:
                break
            path.append(child)
        return path

    async def _look_again(self, root: Node) -> bool:
        """Every safe proposal at `root` ran and none led anywhere better: sample the policy there once more, told
        what was tried, instead of giving up (once per state). False when that was done already or something is
        still waiting there."""
        waiting = [i for i in self.proposals.get(root.id, []) if i.action_class is not ActionClass.DESTRUCTIVE]
        if root.id in self.asked_again or root.id not in self.proposals or waiting or root.status == "terminal":
            return False
        self.asked_again.add(root.id)
        del self.proposals[root.id]
        tried = ", ".join(self.taken.get(root.id, {})) or "nothing"
        await self.ctx.trace.progress(f"nothing left to try at #{root.id}: asking the policy there again, told it "
                                      f"tried {tried}")
        return True

    def _ran(self, item: FrontierItem) -> None:
        """`item` is taken: it is not proposed again in a later round."""
        items = self.proposals.get(item.node_id, [])
        if item in items:
            items.remove(item)
        self.taken.setdefault(item.node_id, {})[item.action_text] = None

    def _why_stuck(self, root: Node) -> str:
        if root.depth >= self.config.max_steps:
            return f"reached the step limit ({self.config.max_steps}) without an answer"
        if _value(root) >= self.config.threshold:
            return f"#{root.id} was judged a success, but the model never proposed to stop there"
        return "search found no state better than where it started"


def _value(node: Node) -> float:
    return node.value if node.value is not None else 0.0
