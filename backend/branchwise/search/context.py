"""What a search strategy works with, and what it returns; strategies share the node bookkeeping here."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from ..actions import Action, Type
from ..agent.env import BrowserEnv, EnvView, ExecResult
from ..agent.records import StepRecord
from ..agent.reporting import RunReporter
from ..browser import BROWSER_FAILURES
from ..core.approval import Approver, Decision, approval_request
from ..core.budget import RunBudget
from ..core.classes import ActionClassifier, Classification
from ..core.tokens import approx_tokens
from ..observation.locator import Locator
from ..policy.prompts import PromptConfig
from ..policy.steps import element_words, step_words, without_element_ids
from ..protocol import ElementFacts
from ..safety.secrets import SecretKeeper
from ..store import RunStore
from .backtrack import Backtracker
from .examples import ExampleIndex, RetrievalConfig, examples_block, fit_examples, load_examples, site_of
from .generate import HistoryEntry, history_text
from .roles import ModelRoles
from .snapshot import retarget, state_key
from .state import SearchState
from .trace import SearchTrace
from .tree import Node
from .urlcheck import UrlCheck
from .validate import ActionSpace

log = logging.getLogger(__name__)

SUMMARY_CHARS = 240


@dataclass
class SearchContext:
    run_id: str
    task: str
    env: BrowserEnv
    roles: ModelRoles
    backtracker: Backtracker
    classifier: ActionClassifier
    approver: Approver
    trace: SearchTrace
    reporter: RunReporter
    steps: list[StepRecord]
    # The tree, the node the tab shows and the waiting actions: the run's, shared with the trace (which only reads).
    state: SearchState
    # Checks `goto` addresses before they count as candidates; None skips the check.
    url_check: UrlCheck | None = None
    # Past steps to show the retrieval prompt variation; None when there are none.
    examples: ExampleIndex | None = None
    # Retrieved steps in every strategy's prompt (--examples), not only in action_aware's retrieval variation.
    use_examples: bool = False
    # Whether the store's finished runs join the retrieval pool (off in eval: see `SearchConfig.past_runs`).
    past_runs: bool = True
    # What demonstrations of this run's site are kept by (`examples.site_of` the start page, or the eval's
    # `sandbox:<site>`); "" before the first observation.
    site: str = ""
    # The run's typed secrets: masked in every action text and scrubbed from thoughts (safety/secrets.py).
    secrets: SecretKeeper = field(default_factory=SecretKeeper)
    # The run store, for strategies that learn from earlier runs (retrieved examples); None: nothing is stored.
    store: RunStore | None = None
    # The actions the user refused to run (ask_approval), in order: they explain a search that ends without an answer.
    denied: list[str] = field(default_factory=list)
    # What the run may still spend on its model (the roles hold every call to it); search samples less as it runs low.
    budget: RunBudget = field(default_factory=RunBudget)
    # Steps taken before this session (a resumed run's recorded path): the first step here is numbered after them.
    step_base: int = 0

    def failed(self, reason: str) -> SearchOutcome:
        """The search ends without an answer for `reason`, naming the actions it was not allowed to run."""
        if self.denied:
            reason += "; not allowed to run " + ", ".join(f"`{a}`" for a in dict.fromkeys(self.denied))
        return SearchOutcome("failed", reason=reason)


@dataclass(frozen=True)
class SearchOutcome:
    status: Literal["finished", "failed"]
    answer: str = ""
    reason: str = ""


class LostTrack(RuntimeError):
    """The working tab is no longer at any known node (a naive replay broke midway): search cannot go on."""


class SearchStrategy(Protocol):
    name: str
    # Whether it ever goes back to an earlier state (the run records its backtracking mode only then).
    backtracks: bool

    async def search(self, ctx: SearchContext) -> SearchOutcome: ...


async def ensure_examples(ctx: SearchContext, config: RetrievalConfig) -> None:
    """Load the retrieval pool once per run (finished runs and the site's demonstrations), saying what it holds."""
    if ctx.store is None or ctx.examples is not None:
        return
    ctx.examples = await load_examples(ctx.store, config, ctx.run_id, ctx.site, past_runs=ctx.past_runs)
    if ctx.examples is not None:
        await ctx.trace.progress(f"retrieval: {len(ctx.examples)} past steps from {ctx.examples.runs} finished "
                                 f"run(s) and {ctx.examples.demos} demonstration(s) of {ctx.site or 'no site'}")


def with_examples(ctx: SearchContext, objective: str, observation: str, prompt: PromptConfig) -> str:
    """`objective` followed by the retrieved steps most like it and the page, within the prompt's examples budget
    (--examples)."""
    if not ctx.use_examples or ctx.examples is None:
        return objective
    block = fit_examples(examples_block(ctx.examples.top(ctx.task, observation)), prompt.examples_chars)
    return f"{objective}\n{block}" if block else objective


def policy_history(ctx: SearchContext, node: Node, window: int, prompt: PromptConfig) -> str | None:
    """The steps that led to `node` as a policy prompt shows them: the last `window`, within its history budget."""
    return history_text(history_of(ctx, node), window, prompt.history_chars)


def target_locator(node: Node, action: Action) -> Locator | None:
    """Where the element `action` targets is on `node`'s page (for replay and the trace); None when it targets none."""
    element_id = action.element_id
    if element_id is None or node.page is None or element_id not in node.page.elements:
        return None
    return node.page.elements[element_id].locator


def node_from_view(view: EnvView, parent: Node | None = None, **fields: object) -> Node:
    """The node of `view`, reached from `parent` (whose pages' numbers it has seen too); a root without."""
    seen_before = parent.space.seen_numbers if parent is not None else None
    node = Node(id=-1, parent_id=None, depth=0, url=view.url, title=view.title, text=view.text, page=view.page,
                tabs=tuple(t.url for t in view.tabs), active_tab=view.active_tab,
                space=ActionSpace.of(view, seen_before), state=state_key(view.url, view.text))
    for name, value in fields.items():
        setattr(node, name, value)
    return node


async def start_node(ctx: SearchContext) -> Node:
    """The node search starts from: the page the working tab shows, added as the tree's root; in a resumed run, the
    node resume left current (the tree already holds what the run recorded before)."""
    tree = ctx.state.tree
    if ctx.state.current is None:
        root = tree.add_root(node_from_view(await ctx.env.observe()))
        # The task's numbers (an order number, a year) are the user's: an answer may give them.
        root.space = root.space.with_seen(ctx.task)
        ctx.state.current = root.id
        await ctx.trace.node(root)
    await ctx.trace.at(ctx.env.tab_id)
    start = tree[ctx.state.current]
    # The site is known once the start page is (the eval names its sandbox copies itself: their ports change).
    ctx.site = ctx.site or site_of(start.url)
    return start


def history_of(ctx: SearchContext, node: Node) -> list[HistoryEntry]:
    """The steps that led to `node` as policy prompts show them: in words, naming the element each acted on, with no
    element id in the step or its reasoning (policy/steps.py: the next pages number their elements anew, and a small
    model reuses the ids it is shown)."""
    tree = ctx.state.tree
    # A secret typed after a thought was written is scrubbed from it too.
    # A node no action led to (where a resumed run found its tab) is not a step.
    return [HistoryEntry(summary=without_element_ids(thought_summary(ctx.secrets.scrub(n.thought))),
                         action=step_in_words(ctx, n))
            for n in tree.lineage(node.id)[1:] if n.action_text]


def step_in_words(ctx: SearchContext, node: Node) -> str:
    """The step that led to `node`, in words, naming the element it acted on (as recorded where its action is not
    known): what a prompt that does not show the page the step was taken on says of it."""
    if node.action is None:
        return node.action_text
    parent = ctx.state.tree.nodes.get(node.parent_id) if node.parent_id is not None else None
    locator = node.action_locator or (target_locator(parent, node.action) if parent is not None else None)
    return words_for(node.action, locator, ctx.secrets.scrub)


def words_for(action: Action, locator: Locator | None, scrub: Callable[[str], str]) -> str:
    """`action`, on the element `locator` found, as a history shows a step taken (policy/steps.py); as written when
    the element it acted on is not known (a page read without its elements, a resumed run's steps). `scrub` masks
    the run's secrets, in typed text before it is quoted (quoting may escape what it would find)."""
    if isinstance(action, Type) and not action.secret:
        action = replace(action, text=scrub(action.text))
    if locator is None:
        return scrub(action.to_text() if action.element_id is not None else step_words(action))
    return scrub(step_words(action, element_words(locator.role, locator.name)))


def thought_summary(thought: str) -> str:
    """A step's thought on one line, as a history shows it beside the action."""
    text = " ".join(thought.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def live_action(ctx: SearchContext, node: Node, action: Action) -> Action | None:
    """`action` was proposed on the node's stored page; the working tab may show a fresh copy with other ids."""
    live = ctx.env.last
    if live is None or node.page is None or live.page is None or live.page is node.page:
        return action
    return retarget(action, node.page, live.page)


async def element_facts(ctx: SearchContext, node: Node, actions: Sequence[Action]) -> dict[int, ElementFacts]:
    """DOM facts of the elements `actions` target on `node`'s page (ids as on that page), in one round trip.

    Only while the working tab shows that page (the node is current): another page would answer for other elements.
    Empty when the page cannot be read (closed tab, open dialog): the classifier then judges without facts, fail safe.
    """
    live = ctx.env.last
    ids = [a.element_id for a in actions if a.element_id is not None]
    if not ids or ctx.state.current != node.id or node.page is None or live is None or live.page is None:
        return {}
    stored, shown = node.page, live.page
    # The tab may show a fresh capture of the node's page with other ids: map them through the locators.
    found = {i: i if shown is stored else shown.find(stored.elements[i].locator)
             for i in ids if i in stored.elements}
    mapped = {i: live_id for i, live_id in found.items() if live_id is not None}
    try:
        facts = await ctx.env.inspect(mapped.values())
    except BROWSER_FAILURES as exc:
        log.info("could not inspect the candidates of #%d, classifying without DOM facts: %s", node.id, exc)
        return {}
    return {i: facts[live_id] for i, live_id in mapped.items() if live_id in facts}


async def classify_candidates(ctx: SearchContext, node: Node, actions: Sequence[Action]) -> list[Classification]:
    """The classifier's verdict on each action proposed at `node`, with the DOM facts of its element when readable."""
    facts = await element_facts(ctx, node, actions)
    return [ctx.classifier.classify(action, node.page,
                                    facts.get(action.element_id) if action.element_id is not None else None)
            for action in actions]


async def record_step(ctx: SearchContext, node: Node, error: str = "", ran: ExecResult | None = None) -> None:
    """An action really ran in the working tab: the user sees it as a step, like in the greedy agent. `ran`: what
    executing it returned, when it ran in the page."""
    record = StepRecord(index=ctx.step_base + len(ctx.steps) + 1, url=node.url, observation_chars=len(node.text),
                        observation_tokens=approx_tokens(node.text),
                        thought=node.thought, action=node.action_text, error=error,
                        settle_ms=ran.settle_ms if ran is not None else None,
                        settled=ran.settled if ran is not None else True)
    ctx.steps.append(record)
    await ctx.trace.usage(ctx.roles.usage())
    await ctx.reporter.step(ctx.run_id, record)
    await ctx.reporter.progress(ctx.run_id, f"used {ctx.budget.describe()}")


async def ask_approval(ctx: SearchContext, at: Node, action: Action, action_text: str,
                       classification: Classification) -> Decision:
    """Asks whether a destructive action proposed at `at` may run; the question and the answer go to the audit log,
    the answer onto the action's verdict."""
    # While the working tab shows `at`, the element can be highlighted there for the user.
    live = ctx.env.last
    request = approval_request(ctx.run_id, action, action_text, at.url, at.page, classification,
                               tab_id=live.tab_id if live is not None else None,
                               shown=live.page if live is not None and ctx.state.current == at.id else None)
    await ctx.trace.asked(at.id, request, classification)
    decision = await ctx.approver.decide(request)
    await ctx.trace.decided(at.id, request, classification, decision)
    if not decision.approved:
        ctx.denied.append(action_text)
        await ctx.trace.progress(f"not running `{action_text}`: denied by {decision.by}"
                                 + (f" ({decision.note})" if decision.note else ""))
    return decision
