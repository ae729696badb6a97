"""The greedy ReAct agent (WebArena's CoT baseline) as a strategy: observe, ask the model for an action, run it, repeat.

Its tree is a line: each step's node is the child of the last, whether the action ran ("open"), the page refused it
("dead"), or it never ran ("invalid": an unparseable answer, shown on the same page). Early stops follow WebArena's
(`parsing_failure_th`, `repeating_action_failure_th`): too many answers in a row with no action in them, the same
action proposed too often on an unchanged page (refused or not), or the step limit. An action the page refuses (an id
it does not have, a click on a line that is no control) is fed back and costs a step, but does not end the run by
itself: counted with the unparseable answers, as they were, refusals in a row ended 12 of 24 runs of the
greedy temperature comparison with the local 1.5B model (BENCHMARKS.md). There is no classifier: under the network
gate every mutating request the run makes is held and the user asked.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict

from pydantic import BaseModel, ConfigDict, Field

from ..actions import ActionParseError, Stop, parse_response
from ..core.classes import ActionClass
from ..policy.prompts import PromptConfig, build_cot_messages
from .context import (
    SearchContext,
    SearchOutcome,
    ensure_examples,
    record_step,
    start_node,
    target_locator,
    with_examples,
    words_for,
)
from .examples import RetrievalConfig
from .frontier import FrontierItem
from .meant import proposed
from .step import advance, answer_at, stop_node
from .tree import Node
from .urlcheck import load_failure
from .validate import unavailable_actions, validate_action

log = logging.getLogger(__name__)


class GreedyConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    max_steps: int = Field(default=30, ge=1)
    # WebArena stops when the same action repeats more than this on one observation.
    max_repeats: int = Field(default=3, ge=1)
    # WebArena's parsing_failure_th: answers with no valid action in a row.
    max_unparseable_in_a_row: int = Field(default=3, ge=1)
    temperature: float = 1.0
    prompt: PromptConfig = PromptConfig()
    # With --examples: the retrieved steps shown in every prompt.
    retrieval: RetrievalConfig = RetrievalConfig()


class GreedySearch:
    name = "greedy"
    backtracks = False

    def __init__(self, config: GreedyConfig | None = None) -> None:
        self.config = config or GreedyConfig()

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        tree, config = ctx.state.tree, self.config
        root = await start_node(ctx)
        if ctx.use_examples:
            await ensure_examples(ctx, config.retrieval)
        previous: str | None = None
        repeats: Counter[tuple[str, str]] = Counter()
        # Per page, the answers refused there: given again on that page (not on a later one), their numbers are taken.
        regiven: defaultdict[str, str] = defaultdict(str)
        unparseable_in_a_row = 0
        outcome: SearchOutcome | None = None
        # A resumed run has taken the steps of its recorded path already.
        for _ in range(config.max_steps - root.depth):
            node = tree[ctx.state.current if ctx.state.current is not None else root.id]
            if node.status == "open":
                node.status = "expanded"
                await ctx.trace.node(node)
            prompt = config.prompt.fitted(ctx.roles.policy.config)
            objective = with_examples(ctx, ctx.task, node.text, prompt)
            messages = build_cot_messages(objective, node.text, node.url, previous, config=prompt,
                                          unavailable=unavailable_actions(node.page, node.space))
            completion = await ctx.roles.policy.complete(messages, temperature=config.temperature)
            try:
                parsed = parse_response(completion.text)
            except ActionParseError as exc:
                ctx.roles.policy.noted("unparseable")
                problem = ctx.secrets.scrub(str(exc))
                await _invalid(ctx, node, ctx.secrets.scrub(completion.text.strip())[-500:],
                               f"invalid answer: {problem}")
                previous = f"None (your last answer had no valid action: {problem})"
                unparseable_in_a_row += 1
            else:
                unparseable_in_a_row = 0
                # From here on a typed password or card number shows as [••••••] (history, logs, store, --json).
                action, thought = proposed(parsed, node.page, ctx.secrets, ctx.roles.policy)
                item = FrontierItem(node_id=node.id, action=action, action_text=action.to_text(),
                                    action_class=ActionClass.TERMINATING if isinstance(action, Stop)
                                    else ActionClass.SAFE, reward=0.0, thought=thought)
                refusal = validate_action(action, node.page, node.space.with_seen(regiven[node.state]))
                if isinstance(action, Stop) and refusal is None:
                    end = stop_node(ctx, node, item)
                    end.reward = None
                    await answer_at(ctx, end)
                    return SearchOutcome("finished", answer=action.answer)
                repeats[(node.state, item.action_text)] += 1
                if repeats[(node.state, item.action_text)] > config.max_repeats:
                    await _invalid(ctx, node, thought, "same action repeated on an unchanged page", item.action_text)
                    outcome = SearchOutcome("failed", reason=f"stopped early: `{item.action_text}` was proposed "
                                                             f"{config.max_repeats + 1} times on the same page")
                    break
                if refusal is not None:
                    # Not run: an element id the page does not have, a disabled one, a scroll with nowhere to go, an
                    # answer with a number no page showed (taken if given again: the model may have counted it).
                    ctx.roles.policy.noted(refusal.kind)
                    if isinstance(action, Stop):
                        regiven[node.state] += f" {action.answer}"
                    await _invalid(ctx, node, thought, f"not run: {refusal}", item.action_text)
                    previous = f"{item.action_text} (it cannot be done: {refusal})"
                else:
                    step = await advance(ctx, node, item, recognise_revisits=False)
                    if step.node is not None:
                        await _unjudged(ctx, step.node)
                    if step.node is not None and step.node.status != "dead":
                        # Said, so that a small model does not try the same thing again (it would, verbatim). In
                        # words, without the element's id: the next page numbers its elements anew.
                        unchanged = step.node.state == node.state
                        done = words_for(item.action, target_locator(node, item.action), ctx.secrets.scrub)
                        previous = done + (" (done, but the page did not change)" if unchanged else "")
                    else:
                        error = ctx.steps[-1].error if step.node is not None else step.reason
                        if step.node is None:
                            await _invalid(ctx, node, thought, error, item.action_text)
                        previous = f"{item.action_text} (it failed: {error})"
            if unparseable_in_a_row >= config.max_unparseable_in_a_row:
                reason = (f"stopped early: {unparseable_in_a_row} answers in a row with no valid action (last: "
                          f"{ctx.steps[-1].error})")
                live = ctx.env.last
                failure = load_failure(live.url, live.navigation) if live is not None else None
                # The model flounders on a page that did not load: that, not the model, is what the user can fix.
                outcome = SearchOutcome("failed", reason=f"stopped: {failure}; {reason}" if failure else reason)
                break
        await ctx.trace.chose([n.id for n in tree.lineage(ctx.state.current or root.id)])
        return outcome or ctx.failed(f"reached the step limit ({config.max_steps}) without an answer")


async def _invalid(ctx: SearchContext, node: Node, thought: str, error: str, action_text: str = "") -> None:
    """A step that never ran: recorded as an "invalid" node showing the same page, which the next step starts from."""
    child = ctx.state.tree.add_child(node.id, Node(
        id=-1, parent_id=None, depth=0, url=node.url, title=node.title, text=node.text, page=node.page,
        tabs=node.tabs, active_tab=node.active_tab, state=node.state, space=node.space, action_text=action_text,
        thought=thought, status="invalid", note=error))
    ctx.state.current = child.id
    await ctx.trace.node(child)
    await record_step(ctx, child, error)


async def _unjudged(ctx: SearchContext, node: Node) -> None:
    """Greedy neither classifies nor scores its actions: no class (unless what the action sent gave it one) and no
    reward on record."""
    node.reward = None
    if node.action_class is ActionClass.SAFE:
        node.action_class = None
    await ctx.trace.node(node)
