"""A small fake site for the planner's strategy tests: pages linked by their links, an environment that walks them, a
backtracker that records where search went back to (and can be told to fail), and model answers keyed on the page.

Home ([1] Books, [2] About, [3] Contact, [4] button Subscribe, [5] 'New: The Quiet Orchard, 1997 (2003 edition)') ->
Books ([1] Home, [2] Orchard, [3] button Buy all, [4] 'The Quiet Orchard, 1997') -> Orchard ([1] Home,
[2] 'Published 1997', [3] Books). The years are on the pages before Orchard too: an answer gives only numbers a page
showed.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from branchwise.actions import Action, Click, GoBack, Goto
from branchwise.agent.env import EnvView, ExecResult
from branchwise.agent.reporting import TerminalReporter
from branchwise.core.approval import Approver, ScriptedApprover
from branchwise.core.budget import RunBudget
from branchwise.core.requests import ExpectedRequest
from branchwise.protocol import ElementFacts, NavigationInfo
from branchwise.search.backtrack import BacktrackResult
from branchwise.search.context import SearchContext, SearchOutcome, SearchStrategy
from branchwise.search.heuristic import HeuristicClassifier
from branchwise.search.roles import ModelRoles, RoleModel
from branchwise.search.state import SearchState
from branchwise.search.trace import SearchTrace
from branchwise.search.tree import SearchTree
from branchwise.search.urlcheck import UrlCheck
from branchwise.store import RunRecord, RunStore, StoredRun

from fake_models import Call, FakeModel
from pageviews import page

HOME_URL, BOOKS_URL, ORCHARD_URL = "https://books.example/", "https://books.example/books", \
    "https://books.example/books/orchard"
ABOUT_URL, CONTACT_URL = "https://books.example/about", "https://books.example/contact"
# Reached by `goto` only: [1] a heading around [2] the link to Orchard; [3] a card around [4] button Buy all.
SHELF_URL = "https://books.example/shelf"
PAGES = {
    HOME_URL: page(("link", "Books"), ("link", "About"), ("link", "Contact"), ("button", "Subscribe"),
                   ("StaticText", "New: The Quiet Orchard, 1997 (2003 edition)"), url=HOME_URL, title="Home"),
    BOOKS_URL: page(("link", "Home"), ("link", "Orchard"), ("button", "Buy all"),
                    ("StaticText", "The Quiet Orchard, 1997"), url=BOOKS_URL, title="Books"),
    ORCHARD_URL: page(("link", "Home"), ("StaticText", "Published 1997"), ("link", "Books"), url=ORCHARD_URL,
                      title="The Quiet Orchard"),
    ABOUT_URL: page(("link", "Home"), url=ABOUT_URL, title="About"),
    SHELF_URL: page(("heading", "The Quiet Orchard"), ("link", "Orchard"), ("article", ""), ("button", "Buy all"),
                    children={1: (2,), 3: (4,)}, inert={1, 3}, url=SHELF_URL, title="Shelf"),
    CONTACT_URL: page(("link", "Home"), url=CONTACT_URL, title="Contact"),
}
LINKS = {"Books": BOOKS_URL, "About": ABOUT_URL, "Contact": CONTACT_URL, "Home": HOME_URL, "Orchard": ORCHARD_URL}
TASK = "When was The Quiet Orchard published?"


@dataclass
class SiteEnv:
    """Clicking a link opens its page; buttons do nothing visible."""

    url: str = HOME_URL
    # The working tab, as BrowserEnv has it (the run records where it works).
    tab_id: int = 1
    last: EnvView | None = None
    executed: list[tuple[str, str]] = field(default_factory=list)
    # With `history`, the tab reports whether it has a page behind (`behind`, which a restore empties) and goes back.
    history: bool = False
    behind: list[str] = field(default_factory=list)

    async def observe(self) -> EnvView:
        shown = PAGES[self.url]
        navigation = NavigationInfo(can_go_back=bool(self.behind) if self.history else None)
        self.last = EnvView(shown.text, shown.url, shown.title, tab_id=1, raw_node_count=len(shown.elements),
                            page=shown, navigation=navigation)
        return self.last

    async def execute(self, action: Action, *, allow: Sequence[ExpectedRequest] | None = None) -> ExecResult:
        self.executed.append((self.url, action.to_text()))
        before = self.url
        if isinstance(action, Click):
            element = PAGES[self.url].elements[action.element_id]
            self.url = LINKS.get(element.name, self.url)
        elif isinstance(action, Goto) and action.url in PAGES:
            self.url = action.url
        elif isinstance(action, GoBack):
            if not self.behind:
                return ExecResult(False, "there is no earlier page to go back to")
            self.url = self.behind.pop()
            return ExecResult(True)
        if self.url != before:
            self.behind.append(before)
        return ExecResult(True)

    async def inspect(self, element_ids: object) -> dict[int, ElementFacts]:
        return {}


@dataclass
class FakeBacktracker:
    """Moves the env to the target node's page, except for the node ids in `fail`."""

    env: SiteEnv
    fail: set[int] = field(default_factory=set)
    moves: list[int] = field(default_factory=list)
    mode: str = "speculative"

    async def move(self, env: object, tree: SearchTree, target_id: int, pending: Action | None) -> BacktrackResult:
        self.moves.append(target_id)
        if target_id in self.fail:
            return BacktrackResult(False, "speculative", "the page changed: link 'Home' is gone")
        self.env.url, self.env.behind = tree[target_id].url, []  # a new tab, opened at the node's address
        await self.env.observe()
        return BacktrackResult(True, "speculative", action=pending)


def act(action: str) -> str:
    return f"Let's think step-by-step. I look at the page. In summary, the next action I will perform is ```{action}```"


def verdict(status: str, on_track: str = "yes") -> str:
    return f"Thoughts: judged.\nStatus: {status}\nOn the right track to success: {on_track}"


def page_of(call: Call) -> str:
    """The URL the prompt shows the page of (policy prompts say `URL:`, value prompts `Current URL:`); a retry after
    an invalid answer asks about the page of the turn before."""
    for message in reversed(call.messages):
        found = re.findall(r"^(?:Current )?URL: (\S+)", message.content, re.M)
        if found:
            return str(found[-1])
    return ""


def answer_of(call: Call) -> str | None:
    found = re.search(r"^Agent's answer to the user: (.*)$", call.last, re.M)
    return None if found is None or found.group(1).startswith("(none") else found.group(1)


Choices = Callable[[Call], str | Sequence[str]]


def by_page(answers: Mapping[str, str | Sequence[str]]) -> Choices:
    """The same answers whenever the prompt is at a page (all n choices cycle through them)."""
    return lambda call: answers[page_of(call)]


def in_turn(answers: dict[str, Sequence[str]]) -> Choices:
    """Each call at a page takes the next answer for that page (the last one repeats): generators that disagree."""
    seen: Counter[str] = Counter()

    def choose(call: Call) -> str:
        url = page_of(call)
        options = answers[url]
        seen[url] += 1
        return options[min(seen[url], len(options)) - 1]

    return choose


@dataclass(frozen=True)
class SiteRun:
    outcome: SearchOutcome
    stored: StoredRun
    env: SiteEnv
    backtracker: FakeBacktracker
    policy: FakeModel
    value: FakeModel
    shown: str
    roles: ModelRoles

    def calls_at(self, model: FakeModel, url: str) -> int:
        return sum(page_of(call) == url for call in model.calls)


def checklist_judge(call: Call) -> str:
    """The reward model (action_aware) with a one-item checklist, rating every proposal alike."""
    if "Starting URL:" in call.last:
        return "Checklist 1: Find the year - read it off the book's page"
    return "Checklist 1: In Progress"


def search_site(tmp_path: Path, strategy: SearchStrategy, policy: Choices, value: Choices | None = None, *,
                reward: Choices = checklist_judge, approver: Approver | None = None,
                fail: set[int] | None = None, history: bool = False, budget: RunBudget | None = None,
                examples: bool = False, past_runs: bool = True,
                before: Callable[[RunStore], object] | None = None, url_check: UrlCheck | None = None) -> SiteRun:
    """One search for TASK on the fake site; `budget`: the run's limits and what it has spent; `examples`: retrieved
    steps in every prompt, from the run store that `before` may fill first (its finished runs only if `past_runs`)."""
    out = io.StringIO()
    reporter = TerminalReporter(out)
    env = SiteEnv(history=history)
    backtracker = FakeBacktracker(env, fail or set())
    policy_model = FakeModel(policy)
    value_model = FakeModel(value or (lambda call: verdict("failure")))
    reward_model = FakeModel(reward)
    budget = budget or RunBudget()
    roles = ModelRoles(RoleModel(policy_model, "policy", budget=budget), RoleModel(value_model, "value", budget=budget),
                       RoleModel(reward_model, "reward", budget=budget))
    with RunStore(tmp_path / "runs.sqlite3") as store:
        if before is not None:
            before(store)
        store.start_run(RunRecord(run_id="r1", task=TASK, strategy=strategy.name))
        state = SearchState()
        trace = SearchTrace("r1", strategy.name, reporter, store, state)
        ctx = SearchContext("r1", TASK, env, roles, backtracker, HeuristicClassifier(),  # type: ignore[arg-type]
                            approver or ScriptedApprover([]), trace, reporter, [], state, budget=budget,
                            store=store if examples else None, use_examples=examples,
                            past_runs=past_runs, url_check=url_check)
        outcome = asyncio.run(strategy.search(ctx))
        return SiteRun(outcome, store.load_run("r1"), env, backtracker, policy_model, value_model, out.getvalue(),
                       roles)
