"""One NNetNav exploration episode as a search strategy: the run lifecycle (store, network gate, usage, an end with a
reason) is the agent's own; what differs is the objective (a persona), what may run, and what is learnt.

After each action the summariser says what changed; every `relabel_every` actions the labeller names the instruction
the steps so far carry out and the outcome reward model scores them 1–5: below `min_score` the episode is pruned
(it ends), otherwise that prefix is kept, its steps given the reasoning an agent following its instruction would have
had (relabelled) and a `stop` with the answer closing it.

Safe by construction: only actions the classifier calls safe or navigation run (anything else is refused without
asking anyone, and the model is told why), controls that sign up, sign in or subscribe are never used, the network
gate holds every mutating request (the runner's approver refuses them), and the tab waits `delay_s` after each action.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from ..actions import Action, ActionParseError, CloseTab, Goto, NewTab, Stop, TabFocus, parse_response
from ..core.classes import ActionClass
from ..observation import PageView
from ..policy.prompts import PromptConfig, build_cot_messages
from ..safety.sites import SiteRules
from ..search.context import SearchContext, SearchOutcome, element_facts, policy_history, start_node
from ..search.frontier import FrontierItem
from ..search.meant import proposed
from ..search.step import advance
from ..search.tree import Node
from ..search.validate import unavailable_actions, validate_action
from ..store import DemonstrationRecord, DemoStep
from .nnetnav import (
    Label,
    NNetNavPrompts,
    Step,
    explore_objective,
    label_messages,
    parse_change,
    parse_label,
    parse_relabel,
    parse_score,
    relabel_messages,
    reward_messages,
    summary_messages,
)

log = logging.getLogger(__name__)

# Controls exploring never uses, whatever the classifier says: NNetNav's live-site rule (no sign-up, no sign-in).
ACCOUNT_CONTROLS = re.compile(r"\b(sign[\s-]?(?:up|in|on)|log[\s-]?in|register|subscribe|newsletter|"
                              r"create (?:an |your )?account|join)\b", re.I)


class ExploreConfig(BaseModel):
    model_config = ConfigDict(frozen=True)
    # NNetNav explored up to 40 steps; a small local model needs a minute a step.
    max_steps: int = Field(default=12, ge=1)
    relabel_every: int = Field(default=4, ge=1)
    min_score: int = Field(default=4, ge=1, le=5)
    # Seconds the tab rests after each action (NNetNav: at least 0.5 s on live sites).
    delay_s: float = Field(default=0.5, ge=0.0)
    # WebOperator gives a generator 5 tries at a valid action; a small model exploring needs them.
    max_invalid_in_a_row: int = Field(default=5, ge=1)
    temperature: float = 1.0
    history: int = Field(default=5, ge=0)
    prompt: PromptConfig = PromptConfig()
    judges: NNetNavPrompts = NNetNavPrompts()


@dataclass(frozen=True)
class _Kept:
    label: Label
    score: int
    # How many of the episode's steps the instruction covers.
    length: int


def _teaches_nothing(action: Action, node: Node, min_actions: int) -> str | None:
    """Why a move a small model makes while exploring would teach nothing, or None: a stop before the first labelling
    (NNetNav asks for at least 4 actions before one; `search` lets later stops end the episode), a tab action (an
    episode works in its one tab: a 1.5B model opened three blank tabs in a row and explored nothing), or an address
    the tab already shows."""
    if isinstance(action, Stop):
        return f"explore further first; stop only after at least {min_actions} actions"
    if isinstance(action, NewTab | TabFocus | CloseTab):
        return "exploring works in this one tab: open pages of the site with click or goto"
    if isinstance(action, Goto) and action.url and _page_address(action.url) == _page_address(node.url):
        return "the tab already shows this page; open another page of the site"
    return None


def _not_while_exploring(taken: int, min_actions: int) -> list[str]:
    """What the policy prompt lists as not possible while exploring, beside what the page does not allow: told up
    front rather than learnt from refusals (`_teaches_nothing` still refuses them)."""
    unavailable = ["new_tab (exploring works in this one tab)"]
    if taken < min_actions:
        unavailable.append(f"stop (not before {min_actions} actions; {taken} taken so far)")
    return unavailable


def _attempts_note(refused: list[str]) -> str:
    """The refused attempts on this page, for the objective's end."""
    if not refused:
        return ""
    return "\nNOT RUN ON THIS PAGE, do not repeat them:\n" + "\n".join(f"- {r}" for r in refused)


def _page_address(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.lower(), parts.path.rstrip("/"), parts.query, ""))


def account_control(action: Action, page: PageView | None) -> str | None:
    """Why `action` must not run while exploring (it uses a sign-up, sign-in or subscribe control), or None."""
    element_id = action.element_id
    if element_id is None or page is None or element_id not in page.elements:
        return None
    name = page.elements[element_id].name
    if ACCOUNT_CONTROLS.search(name):
        return f"exploring never uses sign-up, sign-in or subscribe controls ('{name}')"
    return None


class ExploreEpisode:
    """A strategy outside the registry: `branchwise explore` runs it through the agent for each episode."""

    name = "explore"
    backtracks = False

    def __init__(self, config: ExploreConfig, persona: str, site: str, rules: SiteRules | None = None) -> None:
        self.config = config
        self.persona = persona
        self.site = site
        # Where exploring may go (the runner's: the explored host only, never a blocked site); None: anywhere.
        self.rules = rules or SiteRules()
        self.demos: list[DemonstrationRecord] = []
        self.pruned = ""

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        config, tree = self.config, ctx.state.tree
        node = await start_node(ctx)
        objective = explore_objective(self.persona, self.site, config.relabel_every)
        prompt = config.prompt.fitted(ctx.roles.policy.config)
        path: list[Node] = [node]
        steps: list[Step] = []
        # What was refused on this page since the last step, told back in full: told only the last refusal, a 1.5B
        # model went back to the one before it (`goto` the same 404 twice, `stop` twice, in five tries).
        refused: list[str] = []
        while len(steps) < config.max_steps and len(refused) < config.max_invalid_in_a_row and not self.pruned:
            history = policy_history(ctx, node, config.history, prompt)
            unavailable = [*unavailable_actions(node.page, node.space),
                           *_not_while_exploring(len(steps), config.relabel_every)]
            messages = build_cot_messages(objective + _attempts_note(refused), node.text, node.url, history,
                                          config=prompt, unavailable=unavailable)
            text = (await ctx.roles.policy.complete(messages, temperature=config.temperature)).text
            try:
                parsed = parse_response(text)
            except ActionParseError as exc:
                ctx.roles.policy.noted("unparseable")
                refused.append(f"your answer had no valid action ({exc})")
                continue
            action, thought = proposed(parsed, node.page, ctx.secrets, ctx.roles.policy)
            if isinstance(action, Stop) and len(steps) >= config.relabel_every:
                break
            checked = await self._check(ctx, node, action)
            if not isinstance(checked, ActionClass):  # (ActionClass is a str enum: test for it, not for str)
                await ctx.trace.progress(f"not exploring `{action.to_text()}`: {checked}")
                refused.append(f"`{action.to_text()}` was not run: {checked}")
                continue
            item = FrontierItem(node_id=node.id, action=action, action_text=action.to_text(),
                                action_class=checked, reward=0.0, thought=thought)
            step = await advance(ctx, node, item, recognise_revisits=False)
            if step.node is None or step.node.status == "dead":
                refused.append(f"`{item.action_text}` failed")
                continue
            refused = []
            child = step.node
            summary = await ctx.roles.plans.complete(
                summary_messages(node.url, node.text, item.action_text, child.url, child.text, config.judges),
                temperature=0.0)
            steps.append(Step(node.url, item.action_text, parse_change(summary.text)))
            node = child
            path.append(node)
            if config.delay_s:
                await asyncio.sleep(config.delay_s)
            if len(steps) % config.relabel_every == 0:
                judged = await self._judge(ctx, steps, node)
                if judged is not None:
                    # Written up at once: an episode that ends on a limit or an error keeps what it learnt.
                    self.demos.append(await self._demonstration(ctx, judged, path, steps))
        await ctx.trace.chose([n.id for n in tree.lineage(node.id)])
        ending = f"; pruned: {self.pruned}" if self.pruned else ""
        return SearchOutcome("finished", answer=f"{len(self.demos)} demonstration(s) from {len(steps)} step(s)",
                             reason=f"explored as {self.persona}{ending}")

    async def _check(self, ctx: SearchContext, node: Node, action: Action) -> ActionClass | str:
        """The class of an action that may run while exploring, or why it may not."""
        teaches_nothing = _teaches_nothing(action, node, self.config.relabel_every)
        if teaches_nothing is not None:
            ctx.roles.policy.noted("invalid_action")
            return teaches_nothing
        refusal = validate_action(action, node.page, node.space)
        if refusal is not None:
            ctx.roles.policy.noted(refusal.kind)
            return refusal.reason
        account = account_control(action, node.page)
        if account is not None:
            return account
        facts = await element_facts(ctx, node, [action])
        fact = facts.get(action.element_id) if action.element_id is not None else None
        # A link or an address off the explored site is refused before it runs: once there, the episode would stop.
        target = action.url if isinstance(action, Goto | NewTab) else (fact.link.href if fact and fact.link else "")
        elsewhere = self.rules.refusal(target) if target else None
        if elsewhere is not None:
            return f"it leads off the site being explored ({elsewhere})"
        # An address on the site that does not load (a small model invents paths) is refused as action_aware's are.
        if isinstance(action, Goto | NewTab) and action.url and ctx.url_check is not None:
            missing = await ctx.url_check.check(action.url)
            if missing is not None:
                ctx.roles.policy.noted("invalid_action")
                return missing
        classification = ctx.classifier.classify(action, node.page, fact)
        await ctx.trace.classified(node.id, action.to_text(), classification, action)
        if not classification.action_class.runs_freely:
            return (f"it is {classification.action_class.value} ({'; '.join(classification.reasons)}): exploring "
                    "only runs actions that change nothing")
        return classification.action_class

    async def _judge(self, ctx: SearchContext, steps: list[Step], node: Node) -> _Kept | None:
        """Label the steps so far and score them; a low score (or no readable label) prunes the episode."""
        judges = self.config.judges
        text = (await ctx.roles.plans.complete(label_messages(self.site, steps, node.url, node.text, judges),
                                               temperature=0.0)).text
        label = parse_label(text)
        if label is None:
            # No instruction for these steps (NNetNav prunes then); nothing to ask the reward model about.
            ctx.roles.plans.noted("unreadable_verdict")
            self.pruned = f"no instruction could be read for the first {len(steps)} steps"
            await ctx.trace.progress(f"after {len(steps)} steps: {self.pruned}")
            return None
        text = (await ctx.roles.value.complete(reward_messages(label.instruction, steps, node.url, node.text, judges),
                                               temperature=0.0)).text
        score = parse_score(text)
        if score is None:
            ctx.roles.value.noted("unreadable_verdict")
        await ctx.trace.progress(f"after {len(steps)} steps: “{label.instruction}”, score {score or '?'} of 5")
        if score is None or score < self.config.min_score:
            self.pruned = f"“{label.instruction}” scored {score or 'unreadable'} (< {self.config.min_score})"
            return None
        return _Kept(label, score, len(steps))

    async def _demonstration(self, ctx: SearchContext, kept: _Kept, path: list[Node],
                             steps: list[Step]) -> DemonstrationRecord:
        prefix = steps[: kept.length]
        text = (await ctx.roles.plans.complete(relabel_messages(kept.label.instruction, prefix, self.config.judges),
                                               temperature=0.0)).text
        reasons = parse_relabel(text, len(prefix))
        demo_steps = [DemoStep(url=path[k].url, observation_text=path[k].text, thought=reasons[k],
                               action_text=step.action) for k, step in enumerate(prefix)]
        last = path[kept.length]
        demo_steps.append(DemoStep(url=last.url, observation_text=last.text, thought="The instruction is carried out.",
                                   action_text=Stop(kept.label.answer or "done").to_text()))
        return DemonstrationRecord(site=self.site, instruction=kept.label.instruction, steps=demo_steps,
                                   score=kept.score, persona=self.persona)
