"""What a search strategy works with, and what it returns; strategies share the node bookkeeping here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..actions import Action
from ..agent.env import BrowserEnv, EnvView
from ..agent.greedy import approx_tokens
from ..agent.records import StepRecord
from ..agent.reporting import RunReporter
from .approval import Approver, Decision, approval_request
from .backtrack import Backtracker
from .classes import ActionClassifier, Classification
from .examples import ExampleIndex
from .generate import HistoryEntry
from .roles import ModelRoles
from .snapshot import retarget
from .trace import SearchTrace
from .tree import Node
from .urlcheck import UrlCheck
from .validate import ActionSpace

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
    # Checks `goto` addresses before they count as candidates; None skips the check.
    url_check: UrlCheck | None = None
    # Past steps to show the retrieval prompt variation; None when there are none.
    examples: ExampleIndex | None = None


@dataclass(frozen=True)
class SearchOutcome:
    status: Literal["finished", "failed"]
    answer: str = ""
    reason: str = ""


class LostTrack(RuntimeError):
    """The working tab is no longer at any known node (a naive replay broke midway): search cannot go on."""


class SearchStrategy(Protocol):
    name: str

    async def search(self, ctx: SearchContext) -> SearchOutcome: ...


def node_from_view(view: EnvView, **fields: object) -> Node:
    node = Node(id=-1, parent_id=None, depth=0, url=view.url, title=view.title, text=view.text, page=view.page,
                tabs=tuple(t.url for t in view.tabs), active_tab=view.active_tab, space=ActionSpace.of(view))
    for name, value in fields.items():
        setattr(node, name, value)
    return node


def history_of(ctx: SearchContext, node: Node) -> list[HistoryEntry]:
    return [HistoryEntry(summary=_summary(n.thought), action=n.action_text)
            for n in ctx.trace.tree.lineage(node.id)[1:]]


def _summary(thought: str) -> str:
    text = " ".join(thought.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def live_action(ctx: SearchContext, node: Node, action: Action) -> Action | None:
    """`action` was proposed on the node's stored page; the working tab may show a fresh copy with other ids."""
    live = ctx.env.last
    if live is None or node.page is None or live.page is None or live.page is node.page:
        return action
    return retarget(action, node.page, live.page)


async def record_step(ctx: SearchContext, node: Node, error: str = "") -> None:
    """An action really ran in the working tab: the user sees it as a step, like in the greedy agent."""
    record = StepRecord(index=len(ctx.steps) + 1, url=node.url, observation_chars=len(node.text),
                        observation_tokens=approx_tokens(node.text),
                        thought=node.thought, action=node.action_text, error=error)
    ctx.steps.append(record)
    await ctx.reporter.step(ctx.run_id, record)


async def ask_approval(ctx: SearchContext, at: Node, action: Action, action_text: str,
                       classification: Classification) -> Decision:
    """Asks whether a destructive action proposed at `at` may run, and records the answer next to the verdict."""
    decision = await ctx.approver.decide(
        approval_request(ctx.run_id, action, action_text, at.url, at.page, classification))
    await ctx.trace.classified(at.id, action_text, classification,
                               "approved" if decision.approved else "denied", decision.by)
    if not decision.approved:
        await ctx.trace.progress(f"not running `{action_text}`: denied by {decision.by}"
                                 + (f" ({decision.note})" if decision.note else ""))
    return decision
