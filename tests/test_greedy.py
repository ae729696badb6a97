"""The greedy agent's loop and early stops, with a scripted model over real HTTP and an in-memory site."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from branchwise.actions import Action, Click
from branchwise.agent.env import EnvView, ExecResult
from branchwise.agent.greedy import GreedyAgent, GreedyConfig
from branchwise.agent.records import RunResult, StepRecord
from branchwise.llm import LLMClient, LLMConfig
from branchwise.scripted_model import Rule, Script, ScriptedModelServer

HOME = "[1] RootWebArea 'Home'\n\t[7] link 'Orders'\n\t[8] button 'Broken'"
ORDERS = "[1] RootWebArea 'Orders'\n\t[9] StaticText 'Order #1042: 3 items, $54.10'"


@dataclass
class SiteEnv:
    """Two pages: clicking [7] opens Orders; [8] always fails like a vanished element would."""

    url: str = "http://shop.test/"
    executed: list[str] = field(default_factory=list)

    async def observe(self) -> EnvView:
        text = ORDERS if self.url.endswith("/orders") else HOME
        return EnvView(text=f"Tab 0 (current): Shop\nURL: {self.url}\n\n{text}", url=self.url, title="Shop",
                       tab_id=1, raw_node_count=10)

    async def execute(self, action: Action) -> ExecResult:
        self.executed.append(action.to_text())
        if action == Click(7):
            self.url = "http://shop.test/orders"
            return ExecResult(True)
        return ExecResult(False, "the element is no longer on the page")


@dataclass
class Recorder:
    steps: list[StepRecord] = field(default_factory=list)
    finished_with: RunResult | None = None

    async def started(self, run_id: str, task: str) -> None:
        pass

    async def step(self, run_id: str, record: StepRecord) -> None:
        self.steps.append(record)

    async def finished(self, result: RunResult) -> None:
        self.finished_with = result


def cot(action: str) -> str:
    return f"Let's think step-by-step. Something. In summary, the next action I will perform is ```{action}```"


@pytest.fixture
def scripted(request: pytest.FixtureRequest) -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(Script(rules=request.param)) as server:
        yield server


def run_agent(server: ScriptedModelServer, env: SiteEnv, **config: object) -> tuple[RunResult, Recorder]:
    async def main() -> tuple[RunResult, Recorder]:
        recorder = Recorder()
        async with LLMClient(LLMConfig(base_url=server.base_url, api_key="t", model="m", max_retries=0)) as client:
            agent = GreedyAgent(client, GreedyConfig(**config))  # type: ignore[arg-type]
            return await agent.run("How much was order 1042?", env, recorder, run_id="r1"), recorder

    return asyncio.run(main())


ANSWERS = [
    Rule(when_contains=["URL: http://shop.test/orders"], search_in="last_user", reply=cot("stop [$54.10]")),
    Rule(when_contains=["link 'Orders'"], search_in="last_user", reply=cot("click [7]")),
]


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_agent_navigates_and_answers(scripted: ScriptedModelServer) -> None:
    env = SiteEnv()
    result, recorder = run_agent(scripted, env)
    assert result.status == "finished" and result.answer == "$54.10"
    assert env.executed == ["click [7]"]
    assert [s.action for s in result.steps] == ["click [7]", "stop [$54.10]"]
    assert [s.url for s in result.steps] == ["http://shop.test/", "http://shop.test/orders"]
    assert result.steps[0].observation_chars == len(asyncio.run(SiteEnv().observe()).text)
    assert recorder.steps == result.steps and recorder.finished_with == result
    assert result.usage.calls == 2 and result.usage.prompt_tokens > 0
    second = scripted.requests()[1].last_user
    assert "OBJECTIVE: How much was order 1042?" in second and "PREVIOUS ACTION: click [7]" in second


@pytest.mark.parametrize("scripted", [[Rule(reply="I am not sure what to do here.")]], indirect=True)
def test_three_unparseable_answers_in_a_row_stop_the_run_and_are_fed_back(scripted: ScriptedModelServer) -> None:
    result, _ = run_agent(scripted, SiteEnv())
    assert result.status == "failed" and "3 invalid actions in a row" in result.reason
    assert len(result.steps) == 3 and all(s.error.startswith("invalid answer") for s in result.steps)
    assert "your last answer had no valid action" in scripted.requests()[1].last_user


@pytest.mark.parametrize("scripted", [[Rule(reply=cot("click [8]"))]], indirect=True)
def test_failed_actions_are_fed_back_and_count_as_invalid(scripted: ScriptedModelServer) -> None:
    result, _ = run_agent(scripted, SiteEnv(), max_repeats=10)
    assert "click [8] (it failed: the element is no longer on the page)" in scripted.requests()[1].last_user
    assert result.status == "failed" and "invalid actions in a row" in result.reason


@pytest.mark.parametrize("scripted", [[Rule(reply=cot("scroll [down]"))]], indirect=True)
def test_the_same_action_on_an_unchanged_page_stops_early(scripted: ScriptedModelServer) -> None:
    env = SiteEnv()
    env_execute = env.execute

    async def scroll_is_fine(action: Action) -> ExecResult:
        await env_execute(action)
        return ExecResult(True)

    env.execute = scroll_is_fine  # type: ignore[method-assign]
    result, _ = run_agent(scripted, env)
    assert result.status == "failed" and "proposed 4 times on the same page" in result.reason
    assert env.executed == ["scroll [down]"] * 3


@pytest.mark.parametrize("scripted", [[Rule(reply=cot("click [7]"))]], indirect=True)
def test_step_limit(scripted: ScriptedModelServer) -> None:
    result, _ = run_agent(scripted, SiteEnv(), max_steps=2)
    assert result.status == "failed" and "step limit (2)" in result.reason and len(result.steps) == 2


def test_an_unreachable_model_fails_the_run_with_a_reason() -> None:
    async def main() -> RunResult:
        config = LLMConfig(base_url="http://127.0.0.1:9/v1", api_key="t", model="m", max_retries=0)
        async with LLMClient(config) as client:
            return await GreedyAgent(client).run("task", SiteEnv(), Recorder())

    result = asyncio.run(main())
    assert result.status == "failed" and "Cannot reach the model" in result.reason
