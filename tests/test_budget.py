"""A run's limits on model calls, tokens and time: never exceeded (calls in flight included), search thins out as they
near, and a run that reaches one stops with the reason and what it used."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from branchwise.actions import Action, Stop
from branchwise.agent.env import ExecResult
from branchwise.agent.records import RunResult
from branchwise.core.budget import BudgetExhausted, Limits, RunBudget
from branchwise.core.classes import ActionClass
from branchwise.core.requests import ExpectedRequest
from branchwise.core.usage import Usage
from branchwise.llm import ChatMessage
from branchwise.search.action_aware import ActionAwareConfig, ActionAwareSearch
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchContext, SearchOutcome, start_node
from branchwise.search.frontier import FrontierItem
from branchwise.search.profiles import PROFILES, search_config
from branchwise.search.roles import ModelRoles, RoleModel
from branchwise.search.value import ValueConfig

from agents import greedy_agent
from fake_models import Call, FakeModel, Reply
from fake_site import BOOKS_URL, HOME_URL, ORCHARD_URL, SiteEnv, act, by_page, page_of, search_site, verdict

MESSAGES = [ChatMessage(role="user", content="x" * 400)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_calls_and_tokens_are_held_before_a_call_and_charged_after() -> None:
    budget = RunBudget(Limits(max_model_calls=3, max_tokens=1000))
    held = budget.reserve(2, 600)
    with pytest.raises(BudgetExhausted, match="1,000 tokens would be exceeded"):
        budget.reserve(1, 500)
    budget.settle(held, Usage(calls=2, prompt_tokens=300, completion_tokens=20))
    assert budget.used.calls == 2 and budget.used.total_tokens == 320
    budget.settle(budget.reserve(1, 500), Usage(calls=1, prompt_tokens=100))
    with pytest.raises(BudgetExhausted, match="3 model calls are spent"):
        budget.reserve(1, 1)


def test_a_failed_call_costs_nothing() -> None:
    budget = RunBudget(Limits(max_model_calls=1))
    budget.settle(budget.reserve(1, 10), None)
    budget.reserve(1, 10)


def test_time_is_up_at_the_limit() -> None:
    clock = Clock()
    budget = RunBudget(Limits(timeout_s=60), clock=clock)
    budget.reserve(1, 1)
    clock.now = 61
    with pytest.raises(BudgetExhausted, match="time limit \\(1m00s\\) is reached"):
        budget.reserve(1, 1)


def test_samples_thin_out_from_half_the_tightest_limit_to_one_at_ninety_percent() -> None:
    clock = Clock()
    budget = RunBudget(Limits(max_model_calls=100, timeout_s=1000), clock=clock)
    assert budget.scaled(20) == 20
    budget.used = Usage(calls=50)
    assert budget.scaled(20) == 20
    budget.used = Usage(calls=70)
    assert budget.scaled(20) == 10
    clock.now = 800  # time is now the tightest: 80 %
    assert budget.pressure() == 0.8 and budget.scaled(20) == 5
    budget.used = Usage(calls=95)
    assert budget.scaled(20) == 1 and budget.scaled(3) == 1
    assert RunBudget().scaled(20) == 20


def test_the_progress_line_says_what_is_used_of_each_limit() -> None:
    clock = Clock()
    budget = RunBudget(Limits(max_model_calls=150, max_tokens=600_000, timeout_s=1800), clock=clock)
    budget.used = Usage(calls=12, prompt_tokens=40_000, completion_tokens=1_200)
    clock.now = 95
    assert budget.describe() == "12/150 calls, 41,200/600,000 tokens, 1m35s/30m00s"
    assert RunBudget().describe() == "0 calls, 0 tokens, 0s"


def test_calls_in_flight_at_once_never_go_over_the_limit() -> None:
    """Five calls start together on a run allowed three: three are answered, two refused, none sent over."""
    model = FakeModel.always("ok")
    budget = RunBudget(Limits(max_model_calls=3))
    role = RoleModel(model, "policy", budget=budget)

    async def run() -> list[object]:
        return await asyncio.gather(*(role.complete(MESSAGES) for _ in range(5)), return_exceptions=True)

    results = asyncio.run(run())
    assert sum(isinstance(r, BudgetExhausted) for r in results) == 2
    assert len(model.calls) == 3 and budget.used.calls == 3


def test_a_run_that_reaches_its_limit_stops_with_the_reason_and_its_usage() -> None:
    model = FakeModel.always(act("hover [7]"))
    agent = greedy_agent(model, max_repeats=10)
    agent.config = agent.config.model_copy(update={"limits": Limits(max_model_calls=2)})
    result = asyncio.run(agent.run("Find the year", SiteEnv(), _Quiet()))  # type: ignore[arg-type]
    assert result.status == "failed"
    assert result.reason.startswith("stopped: the run's 2 model calls are spent (used 2/2 calls")
    assert result.usage.calls == 2 and len(model.calls) == 2


def test_a_run_past_its_time_stops_even_in_the_middle_of_a_step() -> None:
    class SlowEnv(SiteEnv):
        async def execute(self, action: Action, *, allow: Sequence[ExpectedRequest] | None = None) -> ExecResult:
            await asyncio.sleep(5)
            raise AssertionError("the time limit should have stopped the run")

    agent = greedy_agent(FakeModel.always(act("click [1]")))
    agent.config = agent.config.model_copy(update={"limits": Limits(timeout_s=0.3)})
    result = asyncio.run(agent.run("Find the year", SlowEnv(), _Quiet()))  # type: ignore[arg-type]
    assert result.status == "failed" and "time limit (0s) is reached" in result.reason


def test_best_first_asks_fewer_samples_and_branches_as_the_budget_runs_low(tmp_path: Path) -> None:
    walk = {HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")}
    budget = RunBudget(Limits(max_model_calls=200))
    budget.used = Usage(calls=140)  # 70 % spent

    def value(call: object) -> str:
        return verdict("success")

    strategy = BestFirstSearch(BestFirstConfig(candidates=20, branching=4, value=ValueConfig(n=20)))
    run = search_site(tmp_path, strategy, by_page(walk), value, budget=budget)
    assert run.policy.calls[0].n == 10
    # The value's samples thin out too: a run near its limit goes on with fewer, instead of stopping dead.
    assert run.value.calls[0].n == 10
    assert run.outcome.status == "finished"


def test_action_aware_asks_one_generator_near_the_end_and_one_vote_then_stops(tmp_path: Path) -> None:
    walk = {HOME_URL: act("click [1]"), BOOKS_URL: act("click [2]"), ORCHARD_URL: act("stop [1997]")}
    budget = RunBudget(Limits(max_model_calls=1000))
    budget.used = Usage(calls=880)
    run = search_site(tmp_path, ActionAwareSearch(ActionAwareConfig(rephrase=False)), by_page(walk), budget=budget)
    # One generator per page (of three), and a stop one generator proposed is taken.
    assert [c.last.split("URL: ")[1].split("\n")[0] for c in run.policy.calls] == [HOME_URL, BOOKS_URL, ORCHARD_URL]
    assert run.outcome.status == "finished" and run.outcome.answer == "1997"


def limited_best_first(on_track: str) -> RunResult:
    """best_first proposes `stop [1997]` and `click [1]` on the home page; the value judges the home page and the
    answer with `on_track` (failure, so the search goes on), and the run's call limit strikes when the Books page is
    judged."""
    def respond(call: Call) -> Reply:
        if "OBJECTIVE:" in call.last:
            return [act("stop [1997]"), act("click [1]")] if page_of(call) == HOME_URL else act("click [2]")
        if page_of(call) == BOOKS_URL:
            return BudgetExhausted("the run's 5 model calls are spent")
        return verdict("failure", on_track)

    options = BestFirstConfig(candidates=2, branching=2, value=ValueConfig(n=1))
    agent = SearchAgent(ModelRoles.shared(FakeModel(respond)), None,
                        SearchConfig(strategy="best_first", options=options))
    return asyncio.run(agent.run("Find the year", SiteEnv(), _Quiet()))  # type: ignore[arg-type]


def test_a_limit_that_stops_a_search_gives_the_best_answer_it_had_found() -> None:
    """Koh et al. commit to the best trajectory found when the budget runs out: a real 1.5B model's best_first had
    proposed the right answer at its first step (judged 0.60) and failed at the time limit with none."""
    result = limited_best_first(on_track="yes")
    assert (result.status, result.answer) == ("finished", "1997")
    assert result.reason.startswith("stopped: the run's 5 model calls are spent (used ")
    assert "; answered with the best answer the search had found (#1, scored 0.50, read on #0 " in result.reason
    assert result.steps[-1].action == "stop [1997]"


def test_a_limit_that_stops_a_search_without_a_good_enough_answer_fails() -> None:
    result = limited_best_first(on_track="no")
    assert (result.status, result.answer) == ("failed", "")
    assert result.reason.startswith("stopped: the run's 5 model calls are spent") and "answered" not in result.reason


class _StopsWaiting:
    """A strategy that leaves two answers waiting in the frontier (as action_aware does when a step scored higher)
    when the run's limit strikes."""

    name = "waiting"
    backtracks = False

    def __init__(self, rewards: tuple[float, float]) -> None:
        self.rewards = rewards

    async def search(self, ctx: SearchContext) -> SearchOutcome:
        root = await start_node(ctx)
        for answer, reward in zip(("1996", "1997"), self.rewards, strict=True):
            action = Stop(answer)
            ctx.state.frontier.append(FrontierItem(node_id=root.id, action=action, action_text=action.to_text(),
                                                   action_class=ActionClass.TERMINATING, reward=reward))
        raise BudgetExhausted("the run's time limit (1m00s) is reached")


@pytest.mark.parametrize(("rewards", "answer"), [((0.55, 0.8), "1997"), ((0.3, 0.45), "")])
def test_a_limit_gives_the_best_answer_waiting_in_the_frontier(rewards: tuple[float, float], answer: str) -> None:
    agent = SearchAgent(ModelRoles.shared(FakeModel.always("unused")), None, SearchConfig(strategy="greedy"),
                        strategy=_StopsWaiting(rewards))
    result = asyncio.run(agent.run("Find the year", SiteEnv(), _Quiet()))  # type: ignore[arg-type]
    assert result.answer == answer and result.status == ("finished" if answer else "failed")
    assert ("scored 0.80" in result.reason) == bool(answer)


def test_profiles_laptop_by_default_and_the_papers_settings_by_name() -> None:
    laptop = search_config("best_first")
    assert laptop.limits == Limits(max_model_calls=150, max_tokens=600_000, timeout_s=1800.0)
    assert isinstance(laptop.options, BestFirstConfig) and laptop.options.candidates == 5
    assert laptop.options.value.n == 5  # the paper's 20 value samples were 87 % of a real model's calls
    paper = search_config("best_first", profile="paper")
    assert paper.limits == Limits() and paper.options is None  # BestFirstConfig's defaults are the paper's
    mine = search_config("greedy", limits=Limits(max_model_calls=7))
    assert mine.limits == PROFILES["laptop"].limits.model_copy(update={"max_model_calls": 7})


class _Quiet:
    async def started(self, run_id: str, task: str) -> None:
        pass

    async def step(self, run_id: str, record: object) -> None:
        pass

    async def finished(self, result: object) -> None:
        pass

    async def progress(self, run_id: str, text: str) -> None:
        pass

    async def tree(self, update: object) -> None:
        pass
