"""WebPilot (Zhang et al.) as a strategy: a global plan of subtasks, and a small MCTS over the live tab for each.

Global: the Planner splits the task into subtasks; each is searched (or, for an `Extract:` subtask, read off the page
by the Extractor, scrolling when it says so); the Controller judges whether a subtask is complete and writes a
strategic reflection, with which the subtask is tried once more from where it started, and after that the Planner
refines the plan from where the tab is.

Local, per subtask (Alg. 2): select by PUCT (`puct.py`, w = 5) from the subtask's start; expand ONE child, the
Explorer's action (the policy prompt with the subtask, the strategic reflection, the child reflection of the node,
its children's sibling reflections and the Controller's last note); look back at it (effect, child and sibling
reflections); the Appraiser scores it S = w_eff·S_eff + (1 − w_eff)·S_fut on 0–10; the Controller says whether the
subtask is complete; a one-step simulation (the Explorer's next action, run for real, kept as a child) mixes its score
in; backpropagate the maximum. Limits: nodes per subtask, depth, branches, temperature, all settings.

Where this departs from the paper, and why:
- Going back to a node is the speculative replay in a guarded tab that every strategy uses, never a site reset: the
  site is the user's own. A node that cannot be reached again is spent.
- The simulation runs only actions that run freely (safe, navigation): a look-ahead must never need a question to the
  user. Destructive actions are asked about as in the other strategies (`step.advance`) and re-root the tree: the
  subtask's search starts again from their result.
- Effect and reflections are one call, not two; the Verifier is code (`validate_action`, and no action twice from one
  node); the Explorer proposing `stop` means it sees nothing more to do: at the subtask's start the search ends, below
  it the node is a dead end.
- Information comes from the Extractor: the answer is the last `Extract:` subtask's, or, when the plan has none, the
  Extractor's reading of the task at the end, or, when the plans are spent, its reading of the page reached.
- The agents that judge a page an action reached (the look back, the Appraiser, the Controller, the Extractor) are
  told the action in words, naming the element it acted on (`clicked link 'Forums'`), as every policy prompt's history
  is: its id belongs to the page before, which they are not shown.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ..actions import ActionParseError, Scroll, Stop, parse_response
from ..core.classes import ActionClass
from ..llm import ChatMessage
from ..policy.prompts import PromptConfig, build_cot_messages
from .context import (
    SearchContext,
    SearchOutcome,
    classify_candidates,
    ensure_examples,
    policy_history,
    start_node,
    step_in_words,
    target_locator,
    with_examples,
)
from .examples import RetrievalConfig
from .frontier import FrontierItem
from .meant import proposed
from .puct import NEW_CHILD, Stats, backpropagate, best_node, select
from .roles import RoleModel
from .step import advance, answer_at, reach, stop_node
from .tree import Node
from .validate import unavailable_actions, validate_action
from .webpilot import (
    Control,
    Extraction,
    Reflection,
    Subtask,
    WebPilotPrompts,
    appraise_messages,
    control_messages,
    explorer_objective,
    extract_messages,
    parse_appraisal,
    parse_control,
    parse_extraction,
    parse_plan,
    parse_reflection,
    plan_messages,
    refine_feedback,
    reflect_messages,
    unread_control,
)

log = logging.getLogger(__name__)

# The verdict on a look-ahead's node, which no Controller judges.
UNJUDGED = Control(False, "")
FINAL_SUBTASK = Subtask("Answer the user's task from this page: the information it asks for, or 'Done' if it asked "
                        "for something to be done and that is now done", extract=True)


class MctsConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    # The paper's settings: 10 nodes per subtask, depth 5, 3 branches, w = 5, T = 0.3, with the simulation.
    max_nodes: int = Field(default=10, ge=1)
    max_depth: int = Field(default=5, ge=1)
    branches: int = Field(default=3, ge=1)
    exploration: float = Field(default=5.0, ge=0.0)
    temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    # The Explorer's, the one agent that proposes actions (`--temperature`); None: `temperature`, as every agent's.
    explorer_temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    simulate: bool = True
    # S = w_eff·S_eff + (1 − w_eff)·S_fut; with a simulation, (1 − w_sim)·S + w_sim·S_simulated (the paper's code).
    effectiveness_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    simulation_weight: float = Field(default=0.25, ge=0.0, le=1.0)
    # A subtask the Controller calls incomplete is tried this many times before the Planner refines the plan.
    max_attempts: int = Field(default=2, ge=1)
    max_replans: int = Field(default=3, ge=0)
    # Subtasks run in all (retries included), and actions the working tab may be from the start at a subtask's start.
    max_subtasks: int = Field(default=20, ge=1)
    max_steps: int = Field(default=20, ge=1)
    max_scrolls: int = Field(default=3, ge=0)
    # An Explorer's answer that cannot be run (unreadable, an id not on the page, an action already tried there) may be
    # asked again this many times at one node before the node is given up.
    max_failed_tries: int = Field(default=2, ge=1)
    history: int = Field(default=5, ge=0)
    prompt: PromptConfig = PromptConfig()
    agents: WebPilotPrompts = WebPilotPrompts()
    # With --examples: the retrieved steps shown in every Explorer prompt.
    retrieval: RetrievalConfig = RetrievalConfig()


class MctsSearch:
    name = "mcts"
    backtracks = True

    def __init__(self, config: MctsConfig | None = None) -> None:
        self.config = config or MctsConfig()

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        return await _Run(self.config, ctx).go()


@dataclass
class _Subsearch:
    """One subtask's MCTS: its start node, statistics and what was learnt at each node."""

    subtask: Subtask
    root: Node
    strategic: str = ""
    # Where the subtask started: the Controller sees every action since (the root moves when a destructive action
    # re-roots the search; what it did is still part of the subtask).
    started: int = -1
    stats: Stats = field(default_factory=Stats)
    # The look back at the action that led to each node, and the Controller's verdict on each node.
    reflections: dict[int, Reflection] = field(default_factory=dict)
    controls: dict[int, Control] = field(default_factory=dict)
    # Explorer answers at a node that could not be run; at max_failed_tries the node offers no new child.
    failed: Counter[int] = field(default_factory=Counter)
    # Why the Explorer's last answer at a node did not work, told to it there: the same prompt again would draw
    # the same answer (a real 1.5B model proposed one refused action four times in a row at T = 0.3).
    refused: dict[int, str] = field(default_factory=dict)
    spent: set[int] = field(default_factory=set)
    # The Controller's note on the last node it judged incomplete (its reason to go on).
    note: str = ""
    # The node where the Explorer saw nothing more to do, if it said so.
    stopped_at: int | None = None
    nodes: int = 0
    # The children this subtask's search made or went back to: what a node's branches count (an earlier attempt's
    # children are the tree's, not this search's).
    made: set[int] = field(default_factory=set)

    def branches(self, node: Node) -> int:
        return sum(c in self.made for c in node.children)


class _Run:
    def __init__(self, config: MctsConfig, ctx: SearchContext) -> None:
        self.config = config
        self.ctx = ctx
        self.tree = ctx.state.tree
        self.prompt = config.prompt.fitted(ctx.roles.policy.config)
        self.agents = config.agents.fitted(self.prompt)
        # The last extraction found nothing: a run that gives up then answers N/A instead of nothing.
        self.not_found = False
        # The actions not to take again at each node, for the whole run (every attempt and plan), named to the
        # Explorer as tried: the ones the user refused (never asked about again) and the ones that changed nothing.
        self.avoid: dict[int, list[str]] = {}

    # -- global -------------------------------------------------------------------------------------------------

    async def go(self) -> SearchOutcome:
        ctx, config = self.ctx, self.config
        here = await start_node(ctx)
        if ctx.use_examples:
            await ensure_examples(ctx, config.retrieval)
        plan = await self._plan(here, "")
        done: list[str] = []
        attempts: Counter[str] = Counter()
        strategic: dict[str, str] = {}
        runs = replans = 0
        while plan:
            here = self._here()
            if runs >= config.max_subtasks:
                return await self._give_up(f"no answer after {runs} subtasks")
            if here.depth >= config.max_steps:
                return ctx.failed(f"reached the step limit ({config.max_steps}) without an answer")
            subtask = plan.pop(0)
            runs += 1
            await ctx.trace.progress(f"subtask: {subtask}" + (f" (attempt {attempts[subtask.text] + 1})"
                                                              if attempts[subtask.text] else ""))
            start = here
            if subtask.extract:
                answer = await self._extract(subtask)
                if answer is not None and not plan:
                    return await self._finish(answer)
                control = Control(True, f"read: {answer}") if answer is not None else Control(
                    False, "the information was not on the page reached; get to a page that shows it first")
            else:
                control = await self._local(subtask, strategic.get(subtask.text, ""))
            if control.complete:
                done.append(str(subtask) + (f" ({control.reflection})" if subtask.extract else ""))
                continue
            attempts[subtask.text] += 1
            # Reading the same page again reads the same thing: an extraction that failed goes to the Planner.
            again = not subtask.extract and attempts[subtask.text] < config.max_attempts
            back = await self._back_to(start) if again else False
            if back:
                strategic[subtask.text] = control.reflection
                plan.insert(0, subtask)
                await ctx.trace.progress(f"subtask not complete; trying it again from #{start.id}"
                                         + (f": {control.reflection}" if control.reflection else ""))
                continue
            if replans >= config.max_replans:
                return await self._give_up(f"subtask not complete after {replans} refined plans: {subtask}")
            replans += 1
            # A new plan: its subtasks start with fresh attempts (the Planner was told what failed and why). The
            # Controller's reflections stay with their subtasks: a real 1.5B Planner wrote the same plan again for
            # every refinement, and without them its Explorer got the very prompt it had failed with.
            attempts.clear()
            if control.reflection:
                strategic[subtask.text] = control.reflection
            feedback = refine_feedback(done, subtask, control.reflection, plan)
            # A refined plan that starts again with a subtask called done is taken as written: the Controller may have
            # been wrong (left out, such subtasks cost the simulated model six information tasks of 82 at `1a5794e`;
            # judged again, the same prompt drew the same wrong "complete" at every refinement, and five of 82 were
            # lost at `43099cc`).
            plan = await self._plan(self._here(), feedback)
            if not plan:
                return await self._give_up(f"the planner gave no new plan after subtask `{subtask}` failed")
        answer = await self._extract(FINAL_SUBTASK)
        return await self._finish(answer if answer is not None else "N/A")

    def _here(self) -> Node:
        current = self.ctx.state.current
        return self.tree[current if current is not None else self.tree.root_id]

    async def _back_to(self, start: Node) -> bool:
        """Bring the tab back to a subtask's start for another attempt; False when it cannot be rebuilt there."""
        if self.ctx.state.current == start.id:
            return True
        if not self.tree.is_below_root(start.id):
            return False
        _, why = await reach(self.ctx, start, None)
        if self.ctx.state.current != start.id:
            await self.ctx.trace.progress(f"cannot go back to the subtask's start #{start.id} ({why}); the plan is "
                                          "refined from where the tab is")
            return False
        return True

    async def _ask(self, role: RoleModel, messages: list[ChatMessage]) -> str:
        return (await role.complete(messages, temperature=self.config.temperature)).text

    async def _plan(self, node: Node, feedback: str) -> list[Subtask]:
        ctx = self.ctx
        text = await self._ask(ctx.roles.plans, plan_messages(ctx.task, node.url, node.text, feedback, self.agents))
        plan = parse_plan(text)
        if not plan:
            ctx.roles.plans.noted("unreadable_verdict")
            # Without a readable plan the whole task is the one subtask, and the Extractor answers at the end.
            plan = [Subtask(ctx.task)]
        await ctx.trace.progress(("refined plan: " if feedback else "plan: ")
                                 + "; ".join(f"{k}. {s}" for k, s in enumerate(plan, start=1)))
        return plan

    async def _extract(self, subtask: Subtask) -> str | None:
        """The Extractor's answer at the current page, scrolling as it asks up to max_scrolls times; None: not found."""
        ctx = self.ctx
        for scrolled in range(self.config.max_scrolls + 1):
            node = self._here()
            messages = extract_messages(ctx.task, subtask, step_in_words(ctx, node), node.url, node.text, self.agents)
            text = await self._ask(ctx.roles.plans, messages)
            reading = parse_extraction(text)
            refusal = validate_action(Stop(reading.answer), node.page, node.space) if reading.answer else None
            if reading.answer is not None and refusal is not None:
                # A number no page on the way showed: told so, the Extractor reads again; the same number given
                # again is taken (it may have counted rows), as the other strategies' answers are (validate.py);
                # another made-up one is no answer.
                ctx.roles.plans.noted("ungrounded_answer")
                await ctx.trace.progress(f"extracted at #{node.id}: {reading.answer} (not taken: {refusal})")
                text = await self._ask(ctx.roles.plans, [
                    *messages, ChatMessage(role="assistant", content=ctx.secrets.scrub(text)),
                    ChatMessage(role="user", content=f"{refusal}. Answer again in the same format.")])
                space = node.space.with_seen(reading.answer)
                reading = parse_extraction(text)
                if reading.answer and validate_action(Stop(reading.answer), node.page, space) is not None:
                    ctx.roles.plans.noted("ungrounded_answer")
                    reading = Extraction(None)
            if reading.answer is not None:
                self.not_found = False
                await ctx.trace.progress(f"extracted at #{node.id}: {reading.answer}")
                return reading.answer
            if reading.scroll is None or scrolled == self.config.max_scrolls or not await self._scroll(node, reading):
                break
        self.not_found = True
        return None

    async def _scroll(self, node: Node, reading: Extraction) -> bool:
        assert reading.scroll is not None
        action = Scroll(reading.scroll)
        if validate_action(action, node.page, node.space) is not None:
            return False
        item = FrontierItem(node_id=node.id, action=action, action_text=action.to_text(),
                            action_class=ActionClass.SAFE, reward=0.0, thought="The Extractor scrolls to read on.")
        step = await advance(self.ctx, node, item, recognise_revisits=False)
        return step.node is not None and step.node.status != "dead"

    async def _give_up(self, why: str) -> SearchOutcome:
        """The plans are spent. If the information was looked for and not found on the way, the answer says so (N/A,
        WebArena's answer for what does not exist), with the reason. Otherwise the Extractor reads the page reached,
        as at the end of a plan: what a failed plan passed on the way may be the answer (a real 1.5B model's plan
        for 3002 failed on a page that showed it); with nothing there, the run failed."""
        if not self.not_found:
            await self.ctx.trace.progress(f"{why}; reading the page reached for an answer")
            answer = await self._extract(FINAL_SUBTASK)
            if answer is None:
                return self.ctx.failed(f"{why}; the page reached does not answer the task")
            return await self._finish(answer, f"{why}: the answer was read from the page reached")
        await self.ctx.trace.progress(f"{why}; answering N/A")
        return await self._finish("N/A", f"{why}: the information was not found")

    async def _finish(self, answer: str, reason: str = "") -> SearchOutcome:
        node = self._here()
        item = FrontierItem(node_id=node.id, action=Stop(answer), action_text=Stop(answer).to_text(),
                            action_class=ActionClass.TERMINATING, reward=0.0, thought="The Extractor's answer.")
        await answer_at(self.ctx, stop_node(self.ctx, node, item))
        return SearchOutcome("finished", answer=answer, reason=reason)

    # -- local MCTS ---------------------------------------------------------------------------------------------

    async def _local(self, subtask: Subtask, strategic: str) -> Control:
        """Search for `subtask` from the current page; the tab ends at the best node found, and the Controller's verdict
        on it is returned."""
        config = self.config
        here = self._here()
        sub = _Subsearch(subtask, here, strategic, started=here.id)
        for _ in range(config.max_nodes * (config.max_failed_tries + 1)):
            if sub.nodes >= config.max_nodes or sub.stopped_at is not None:
                break
            path = self._select(sub)
            if path is None:
                break  # every node is spent or full
            node = self.tree[path[-1]]
            child = await self._expand(sub, node)
            if child is None:
                continue
            if child.changed_site:
                # A destructive action ran: nothing before it can be reached again; the subtask goes on from there.
                sub = _Subsearch(subtask, child.node, strategic, started=sub.started)
                path = []
            score, control = await self._judge(sub, node, child.node)
            if control.complete:
                return control
            if config.simulate and self.ctx.budget.scaled(2) == 2 and sub.nodes < config.max_nodes:
                score = await self._simulate(sub, child.node, score)
            backpropagate(sub.stats, [*path, child.node.id], score)
        return await self._conclude(sub)

    def _select(self, sub: _Subsearch) -> list[int] | None:
        """Goal-oriented selection: from the subtask's root down by PUCT until "a new child" wins; the path to the node
        to expand, or None when no node can take another child."""
        config, tree = self.config, self.tree
        node, path = sub.root, [sub.root.id]
        while True:
            children = [c for c in node.children if c in sub.stats.own and tree[c].status not in ("dead", "invalid")
                        and not tree[c].unreachable and c not in sub.spent]
            can_widen = (node.id not in sub.spent and not node.unreachable and sub.branches(node) < config.branches
                         and node.depth - sub.root.depth < config.max_depth)
            if not children and not can_widen:
                sub.spent.add(node.id)
                if node.id == sub.root.id:
                    return None
                return self._select(sub)
            choice = select(sub.stats, node.id, children, can_widen=can_widen, w=config.exploration)
            if choice == NEW_CHILD:
                return path
            node = tree[choice]
            path.append(node.id)

    async def _expand(self, sub: _Subsearch, node: Node, *, look_ahead: bool = False) -> _Expanded | None:
        """One child of `node`: the Explorer's action, checked and run. None when nothing ran (the try is counted
        against the node)."""
        ctx, config = self.ctx, self.config
        _, why = await reach(ctx, node, None)
        if ctx.state.current != node.id:
            sub.spent.add(node.id)
            await ctx.trace.progress(f"cannot explore from #{node.id} again: {why}")
            return None
        # An earlier attempt's children are states this attempt may go to again, not actions to avoid.
        tried = [self.tree[c].action_text for c in node.children if c in sub.stats.own] + self.avoid.get(node.id, [])
        reflections = [sub.strategic]
        if node.id in sub.reflections:
            reflections.append(sub.reflections[node.id].child)
        reflections += [sub.reflections[c].sibling for c in node.children if c in sub.reflections]
        reflections.append(sub.note)
        objective = with_examples(ctx, explorer_objective(ctx.task, sub.subtask, reflections, tried,
                                                          sub.refused.get(node.id, "")), node.text, self.prompt)
        history = policy_history(ctx, node, config.history, self.prompt)
        messages = build_cot_messages(objective, node.text, node.url, history, config=self.prompt,
                                      unavailable=unavailable_actions(node.page, node.space))
        policy = ctx.roles.policy
        explorer = config.temperature if config.explorer_temperature is None else config.explorer_temperature
        text = (await policy.complete(messages, temperature=explorer)).text
        try:
            parsed = parse_response(text)
        except ActionParseError:
            policy.noted("unparseable")
            self._failed_try(sub, node, "an answer without an action")
            return None
        action, thought = proposed(parsed, node.page, ctx.secrets, policy)
        if isinstance(action, Stop):
            if look_ahead:
                return None
            # At the subtask's start the search is over; below it, the Controller already called this node not
            # complete, so it is a dead end: the search goes on elsewhere.
            sub.spent.add(node.id)
            if node.id == sub.root.id:
                sub.stopped_at = node.id
            await ctx.trace.progress(f"the explorer sees nothing more to do for the subtask at #{node.id}")
            return None
        refusal = validate_action(action, node.page, node.space)
        if refusal is not None:
            policy.noted(refusal.kind)
            self._failed_try(sub, node, f"`{action.to_text()}`: {refusal}")
            return None
        if action.to_text() in tried:
            self._failed_try(sub, node, f"`{action.to_text()}` was tried from here already")
            return None
        earlier = self._earlier_child(node, action.to_text())
        if earlier is not None:
            # An earlier attempt ran this action from here: its state is gone back to, not made again.
            _, why = await reach(ctx, earlier, None)
            sub.nodes += 1
            sub.made.add(earlier.id)
            if ctx.state.current != earlier.id:
                self._failed_try(sub, node, f"`{action.to_text()}`: {why}")
                return None
            sub.refused.pop(node.id, None)
            return _Expanded(earlier, False)
        [classification] = await classify_candidates(ctx, node, [action])
        await ctx.trace.classified(node.id, action.to_text(), classification, action)
        if look_ahead and not classification.action_class.runs_freely:
            return None
        item = FrontierItem(node_id=node.id, action=action, action_text=action.to_text(),
                            action_class=classification.action_class, reward=0.0, thought=thought,
                            locator=target_locator(node, action),
                            reasons=classification.reasons, sends=classification.sends)
        if node.status == "open":
            node.status = "expanded"
            await ctx.trace.node(node)
        # Every action is a node of its own, a page seen before included: MCTS searches sequences of actions, and
        # the way back from a detour (a link home) must be an action it can take.
        step = await advance(ctx, node, item, recognise_revisits=False)
        if step.node is None and item.action_text in ctx.denied:
            self.avoid.setdefault(node.id, []).append(item.action_text)
        sub.nodes += 1
        if step.node is not None:
            sub.made.add(step.node.id)
        if step.node is None or (step.node.status == "dead" and not step.changed_site):
            note = step.node.note if step.node is not None else ""
            self._failed_try(sub, node, step.reason or f"`{item.action_text}` " + (note or "failed"))
            return None
        if not step.changed_site and step.node.state and step.node.state == node.state:
            await self._changed_nothing(sub, node, step.node)
            return None
        sub.refused.pop(node.id, None)
        return _Expanded(step.node, step.changed_site)

    async def _changed_nothing(self, sub: _Subsearch, node: Node, child: Node) -> None:
        """`child` shows the page `node` showed (a click on plain text, a hover without effect): a revisit of `node`,
        with nothing to appraise. The Explorer is told, or it proposes the same action there again (Qwen2.5-Coder-1.5B
        clicked one article three times in a row)."""
        child.status, child.same_as = "dead", node.id
        child.note = f"changed nothing on the page of #{node.id}"
        self.ctx.state.current = node.id
        self.avoid.setdefault(node.id, []).append(child.action_text)
        await self.ctx.trace.node(child)
        await self.ctx.trace.at(self.ctx.env.tab_id)
        await self.ctx.trace.progress(f"`{child.action_text}` changed nothing on the page of #{node.id}")
        self._failed_try(sub, node, f"`{child.action_text}` changed nothing on the page")

    def _earlier_child(self, node: Node, action_text: str) -> Node | None:
        return next((self.tree[c] for c in node.children if self.tree[c].action_text == action_text
                     and self.tree[c].status not in ("dead", "invalid", "terminal") and not self.tree[c].unreachable),
                    None)

    def _failed_try(self, sub: _Subsearch, node: Node, why: str) -> None:
        sub.failed[node.id] += 1
        sub.refused[node.id] = why
        if sub.failed[node.id] >= self.config.max_failed_tries:
            sub.spent.add(node.id)
        log.info("mcts: nothing ran from #%d: %s", node.id, why)

    async def _judge(self, sub: _Subsearch, parent: Node, child: Node, *,
                     control: bool = True) -> tuple[float, Control]:
        """Look back at the action that led to `child`, appraise it and (unless `control` is False) ask the
        Controller; returns S (0–10) and the verdict."""
        ctx, config = self.ctx, self.config
        task, subtask, step = ctx.task, sub.subtask, step_in_words(ctx, child)
        text = await self._ask(ctx.roles.policy, reflect_messages(task, subtask, step, child.thought, parent.url,
                                                                  child.url, child.text, self.agents))
        reflection = sub.reflections[child.id] = parse_reflection(text)
        text = await self._ask(ctx.roles.value, appraise_messages(task, subtask, step, reflection.effect, child.url,
                                                                  child.text, self.agents))
        scores = parse_appraisal(text)
        if scores is None:
            ctx.roles.value.noted("unreadable_verdict")
        effectiveness, future = scores or (0.0, 0.0)
        score = config.effectiveness_weight * effectiveness + (1 - config.effectiveness_weight) * future
        sub.stats.scored(child.id, score)
        child.value = score / 10
        await ctx.trace.scored(child.id, "value", child.value, "appraiser", [effectiveness, future])
        await ctx.trace.node(child)
        verdict = await self._control(sub, child) if control else UNJUDGED
        judged = ("; subtask " + ("complete" if verdict.complete else "not done")) if control else " (look-ahead)"
        await ctx.trace.progress(f"#{child.id} {child.action_text}: effectiveness {effectiveness:g}, future "
                                 f"{future:g}, S {score:.1f}{judged}")
        return score, verdict

    async def _control(self, sub: _Subsearch, node: Node) -> Control:
        if node.id in sub.controls:
            return sub.controls[node.id]
        ctx = self.ctx
        chain = self.tree.lineage(node.id)
        ids = [n.id for n in chain]
        since = ids.index(sub.started) + 1 if sub.started in ids else 1
        actions = [step_in_words(ctx, n) for n in chain[since:] if n.action_text]
        text = await self._ask(ctx.roles.plans, control_messages(ctx.task, sub.subtask, actions, node.url, node.text,
                                                                 self.agents))
        control = parse_control(text)
        if control is None:
            ctx.roles.plans.noted("unreadable_verdict")
            control = unread_control(text)
        sub.controls[node.id] = control
        if not control.complete:
            sub.note = control.reflection
        return control

    async def _simulate(self, sub: _Subsearch, child: Node, score: float) -> float:
        """The one-step simulation: the Explorer's next action from `child`, run for real if it runs freely and kept
        as `child`'s first child; its appraisal is mixed into `child`'s score."""
        ahead = await self._expand(sub, child, look_ahead=True)
        if ahead is None or ahead.changed_site:
            return score
        simulated, _ = await self._judge(sub, child, ahead.node, control=False)
        sub.stats.n[ahead.node.id] = 1
        mixed = (1 - self.config.simulation_weight) * score + self.config.simulation_weight * simulated
        sub.stats.own[child.id] = mixed
        sub.stats.q[child.id] = max(mixed, simulated)
        return max(mixed, simulated)

    async def _conclude(self, sub: _Subsearch) -> Control:
        """The subtask's search is over without the Controller calling it complete on the way: the tab goes to the best
        node found (or where the Explorer stopped) and the Controller judges it."""
        tree = self.tree
        if sub.stopped_at is not None:
            end = tree[sub.stopped_at]
        else:
            reachable = [n.id for n in tree.subtree(sub.root.id)
                         if n.status not in ("dead", "invalid", "terminal") and not n.unreachable]
            best = best_node(sub.stats, reachable)
            if best is None:
                return Control(False, "no action for this subtask could be run: " + (
                    "every answer was unusable" if sub.failed else "nothing was proposed"))
            end = tree[best]
        _, why = await reach(self.ctx, end, None)
        if self.ctx.state.current != end.id:
            return Control(False, f"the best state found (#{end.id}) could not be reached again: {why}")
        return await self._control(sub, end)


@dataclass(frozen=True)
class _Expanded:
    node: Node
    changed_site: bool
