"""The greedy agent's loop and early stops, with a scripted model over real HTTP and an in-memory site, and its runs
in the run store as `branchwise runs` and `branchwise show` present them."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import SecretStr

from branchwise.actions import Action, Click
from branchwise.agent.env import EnvView, ExecResult
from branchwise.agent.records import RunResult, StepRecord
from branchwise.cli import RunOptions, build_agent
from branchwise.core.approval import DenyApprover
from branchwise.core.status import TERMINATED
from branchwise.core.usage import Usage
from branchwise.link import ExtensionError, LinkTimeout
from branchwise.llm import LLMClient, LLMConfig
from branchwise.models import ModelSetup
from branchwise.protocol import NavigationInfo
from branchwise.safety.gate import NetworkGate
from branchwise.scripted_model import Rule, Script, ScriptedModelServer
from branchwise.search.agent import SearchAgent
from branchwise.search.resume import resume_point
from branchwise.store import (
    ModelCallRecord,
    NodeRecord,
    RunStore,
    default_store_path,
    format_calls,
    format_run,
    format_runs,
)

from agents import greedy_agent

HOME = "[1] RootWebArea 'Home'\n\t[7] link 'Orders'\n\t[8] button 'Broken'"
ORDERS = "[1] RootWebArea 'Orders'\n\t[9] StaticText 'Order #1042: 3 items, $54.10'"


@dataclass
class SiteEnv:
    """Two pages: clicking [7] opens Orders; [8] always fails like a vanished element would."""

    url: str = "http://shop.test/"
    # The working tab, as BrowserEnv has it (the run records where it works).
    tab_id: int = 1
    executed: list[str] = field(default_factory=list)
    last: EnvView | None = None

    async def observe(self) -> EnvView:
        text = ORDERS if self.url.endswith("/orders") else HOME
        self.last = EnvView(text=f"Tab 0 (current): Shop\nURL: {self.url}\n\n{text}", url=self.url, title="Shop",
                            tab_id=1, raw_node_count=10)
        return self.last

    async def execute(self, action: Action, *, allow: object = None) -> ExecResult:
        self.executed.append(action.to_text())
        if action == Click(7):
            self.url = "http://shop.test/orders"
            return ExecResult(True, settle_ms=420)
        return ExecResult(False, "the element is no longer on the page", settle_ms=0)


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

    async def progress(self, run_id: str, text: str) -> None:
        pass

    async def tree(self, update: object) -> None:
        pass


def cot(action: str) -> str:
    return f"Let's think step-by-step. Something. In summary, the next action I will perform is ```{action}```"


@pytest.fixture
def scripted(request: pytest.FixtureRequest) -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(Script(rules=request.param)) as server:
        yield server


def run_agent(server: ScriptedModelServer, env: SiteEnv, store: RunStore | None = None,
              task: str = "How much was order 1042?", **config: object) -> tuple[RunResult, Recorder]:
    async def main() -> tuple[RunResult, Recorder]:
        recorder = Recorder()
        llm = LLMConfig(base_url=server.base_url, api_key=SecretStr("t"), model="m", max_retries=0)
        async with LLMClient(llm) as client:
            agent = greedy_agent(client, store=store, **config)
            return await agent.run(task, env, recorder, run_id="r1"), recorder  # type: ignore[arg-type]

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
    # Each step is shown with the page it led to (the answer: the page it was read from).
    assert [s.url for s in result.steps] == ["http://shop.test/orders", "http://shop.test/orders"]
    # How long the page took to settle after the click is on its step; the answer ran nothing in the page.
    assert [s.settle_ms for s in result.steps] == [420, None]
    assert result.steps[0].observation_chars == len(asyncio.run(SiteEnv(url="http://shop.test/orders").observe()).text)
    assert recorder.steps == result.steps and recorder.finished_with == result
    assert result.usage.calls == 2 and result.usage.prompt_tokens > 0
    second = scripted.requests()[1].last_user
    assert "OBJECTIVE: How much was order 1042?" in second and "PREVIOUS ACTION: click [7]" in second


@pytest.mark.parametrize("scripted", [[Rule(reply="I am not sure what to do here.")]], indirect=True)
def test_a_run_that_flounders_on_a_page_that_did_not_load_says_so_first(scripted: ScriptedModelServer) -> None:
    class DownEnv(SiteEnv):
        async def observe(self) -> EnvView:
            view = await super().observe()
            self.last = replace(view, navigation=NavigationInfo(error_page=True))
            return self.last

    result, _ = run_agent(scripted, DownEnv())
    assert result.status == "failed"
    assert result.reason.startswith("stopped: http://shop.test/ does not load (the browser shows its error page")
    assert "3 answers in a row with no valid action" in result.reason


@pytest.mark.parametrize("scripted", [[Rule(reply="I am not sure what to do here.")]], indirect=True)
def test_three_unparseable_answers_in_a_row_stop_the_run_and_are_fed_back(scripted: ScriptedModelServer) -> None:
    result, _ = run_agent(scripted, SiteEnv())
    assert result.status == "failed" and "3 answers in a row with no valid action" in result.reason
    assert len(result.steps) == 3 and all(s.error.startswith("invalid answer") for s in result.steps)
    assert "your last answer had no valid action" in scripted.requests()[1].last_user
    assert result.mistakes == {"policy": {"unparseable": 3}}


@pytest.mark.parametrize("scripted", [[Rule(reply=cot("click [8]"))]], indirect=True)
def test_failed_actions_are_fed_back_and_end_the_run_only_when_proposed_again_and_again(
        scripted: ScriptedModelServer) -> None:
    env = SiteEnv()
    result, _ = run_agent(scripted, env, max_repeats=5)
    assert "click [8] (it failed: the element is no longer on the page)" in scripted.requests()[1].last_user
    assert result.status == "failed" and "`click [8]` was proposed 6 times on the same page" in result.reason
    assert env.executed == ["click [8]"] * 5


@pytest.mark.parametrize("scripted", [[Rule(replies=[cot("goto [ftp://shop.test/]"), cot("tab_focus [3]"),
                                                     cot("goto [ftp://shop.test/a]"), cot("click [7]"),
                                                     cot("stop [$54.10]")])]], indirect=True)
def test_refused_actions_are_fed_back_and_the_run_goes_on(scripted: ScriptedModelServer) -> None:
    """Three refusals in a row: WebArena's agent would have run on (its early stop counts answers that do not parse),
    and so does this one, to the answer."""
    env = SiteEnv()
    result, _ = run_agent(scripted, env)
    assert "goto [ftp://shop.test/] (it cannot be done: ftp://shop.test/ is not an http(s) address)" in (
        scripted.requests()[1].last_user)
    assert result.status == "finished" and result.answer == "$54.10"
    assert env.executed == ["click [7]"]
    assert result.mistakes == {"policy": {"invalid_action": 3}}


@pytest.mark.parametrize("scripted", [[Rule(reply=cot("scroll [down]"))]], indirect=True)
def test_the_same_action_on_an_unchanged_page_stops_early(scripted: ScriptedModelServer) -> None:
    env = SiteEnv()
    env_execute = env.execute

    async def scroll_is_fine(action: Action, *, allow: object = None) -> ExecResult:
        await env_execute(action)
        return ExecResult(True)

    env.execute = scroll_is_fine  # type: ignore[method-assign]
    result, _ = run_agent(scripted, env)
    assert result.status == "failed" and "proposed 4 times on the same page" in result.reason
    assert env.executed == ["scroll [down]"] * 3
    # The model was told each time that its action changed nothing.
    assert "PREVIOUS ACTION: scrolled down (done, but the page did not change)" in scripted.requests()[1].last_user


@pytest.mark.parametrize("scripted", [[Rule(reply=cot("click [7]"))]], indirect=True)
def test_step_limit(scripted: ScriptedModelServer) -> None:
    result, _ = run_agent(scripted, SiteEnv(), max_steps=2)
    assert result.status == "failed" and "step limit (2)" in result.reason and len(result.steps) == 2


def test_an_unreachable_model_fails_the_run_with_a_reason() -> None:
    async def main() -> RunResult:
        config = LLMConfig(base_url="http://127.0.0.1:9/v1", api_key=SecretStr("t"), model="m", max_retries=0)
        async with LLMClient(config) as client:
            return await greedy_agent(client).run("task", SiteEnv(), Recorder())  # type: ignore[arg-type]

    result = asyncio.run(main())
    assert result.status == "failed" and "Cannot reach the model" in result.reason


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    with RunStore(default_store_path(tmp_path)) as s:
        yield s


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_a_run_whose_record_cannot_be_written_stops_with_the_reason(
        scripted: ScriptedModelServer, store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    write = RunStore.upsert_node

    def failing_after_the_first_page(s: RunStore, node: NodeRecord) -> None:
        if node.node_id > 0:
            raise sqlite3.OperationalError("disk I/O error")
        write(s, node)

    monkeypatch.setattr(RunStore, "upsert_node", failing_after_the_first_page)
    env = SiteEnv()
    result, _ = run_agent(scripted, env, store)
    # The click's step could not be recorded, even after retries: nothing more ran, and the run says why.
    assert env.executed == ["click [7]"]
    assert result.status == "failed"
    assert "could not be written" in result.reason and "disk I/O error" in result.reason
    stored = store.load_run("r1")
    assert stored.run.status == "failed" and stored.run.reason == result.reason


@pytest.mark.parametrize(("scripted", "status", "note"), [
    ([Rule(reply=cot("click [8]"))], "dead", "failed: the element is no longer on the page"),
    ([Rule(reply=cot("goto [ftp://shop.test/]"))], "invalid", "not run: ftp://shop.test/ is not an http(s) address"),
    ([Rule(reply="I am not sure what to do here.")], "invalid", "invalid answer: "),
], indirect=["scripted"])
def test_show_says_why_each_step_failed_or_never_ran(scripted: ScriptedModelServer, store: RunStore, status: str,
                                                    note: str) -> None:
    run_agent(scripted, SiteEnv(), store, max_repeats=2)
    stored = store.load_run("r1")
    assert [(n.status, n.note[:len(note)]) for n in stored.nodes[1:3]] == [(status, note)] * 2
    assert f"{status} ({note}" in format_run(stored)


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_a_finished_run_is_listed_and_shown_as_a_linear_tree(scripted: ScriptedModelServer, store: RunStore) -> None:
    result, recorder = run_agent(scripted, SiteEnv(), store)
    assert result.status == "finished" and recorder.finished_with == result

    [summary] = store.list_runs()
    assert (summary.run_id, summary.strategy, summary.status, summary.answer, summary.nodes) == (
        "r1", "greedy", "finished", "$54.10", 3)
    assert "r1" in format_runs([summary]) and "How much was order 1042?" in format_runs([summary])

    stored = store.load_run("r1")
    assert (stored.run.model, stored.run.reason) == ("m", "")
    assert [(n.node_id, n.parent_id, n.url, n.status) for n in stored.nodes] == [
        (0, None, "http://shop.test/", "expanded"),
        (1, 0, "http://shop.test/orders", "expanded"),
        (2, 1, "http://shop.test/orders", "terminal"),
    ]
    assert stored.nodes[0].observation_text == asyncio.run(SiteEnv().observe()).text
    assert stored.trajectory == [0, 1, 2]
    [usage] = stored.usage
    assert (usage.role, usage.calls, usage.prompt_tokens, usage.completion_tokens) == (
        "policy", 2, result.usage.prompt_tokens, result.usage.completion_tokens)

    shown = format_run(stored)
    assert "Run r1: finished" in shown and "Strategy:  greedy" in shown and "Answer:    $54.10" in shown
    assert "\n★ #0 (start) http://shop.test/  expanded\n" in shown
    assert "\n└── ★ #1 click [7] → http://shop.test/orders  expanded\n" in shown
    assert "\n    └── ★ #2 stop [$54.10]  [terminating] terminal answer=\"$54.10\"\n" in shown
    assert "Chosen trajectory:\n  1. #1 click [7]\n  2. #2 stop [$54.10]\n" in shown
    assert "\n  policy      2" in shown


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_every_model_call_is_kept_with_its_time_and_reply_and_shown_with_calls(scripted: ScriptedModelServer,
                                                                               store: RunStore) -> None:
    result, _ = run_agent(scripted, SiteEnv(), store)
    calls = store.model_calls("r")
    assert [(c.role, c.replies) for c in calls] == [("policy", [cot("click [7]")]), ("policy", [cot("stop [$54.10]")])]
    assert all(c.asked.startswith("You are an autonomous intelligent agent") for c in calls)
    assert sum((c.usage for c in calls), Usage()) == result.usage
    assert all(c.seconds > 0 for c in calls)

    shown = format_calls("r1", calls)
    assert shown.startswith("Model calls of run r1:\n")
    assert "\n  policy      2" in shown
    assert f"\n2. policy, {calls[1].seconds:.1f} s, {calls[1].usage.prompt_tokens} prompt tokens, " in shown
    assert "\n  reply: " + cot("stop [$54.10]") in shown
    assert "no model calls recorded" in format_calls("r0", [])
    assert all(c.prompt == "" for c in calls) and "  prompt:" not in shown  # kept only when asked for


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_keep_prompts_stores_each_prompt_as_sent_without_the_tasks_password(scripted: ScriptedModelServer,
                                                                             store: RunStore) -> None:
    """What the model was shown, word for word, for reading why it answered as it did; a password the task names
    is masked there as everywhere else."""
    run_agent(scripted, SiteEnv(), store, task="Log in with password Tr0ub4dor&3 and say how much order 1042 was",
              keep_prompts=True)
    first, second = store.model_calls("r1")
    assert first.prompt.startswith("[system]\nYou are an autonomous intelligent agent")
    assert "\n\n[user]\n" in first.prompt and "link 'Orders'" in first.prompt
    assert "URL: http://shop.test/orders" in second.prompt and "Order #1042: 3 items, $54.10" in second.prompt
    assert "Tr0ub4dor&3" not in first.prompt + second.prompt and "say how much order 1042 was" in first.prompt
    shown = format_calls("r1", [first])
    assert "\n  prompt:\n    [system]\n    You are an autonomous intelligent agent" in shown


@pytest.mark.parametrize("scripted", [[Rule(reply=cot("click [8]"))]], indirect=True)
def test_a_failed_run_is_recorded_with_its_reason(scripted: ScriptedModelServer, store: RunStore) -> None:
    result, _ = run_agent(scripted, SiteEnv(), store, max_repeats=2)
    assert result.status == "failed"
    stored = store.load_run("r1")
    assert (stored.run.status, stored.run.reason) == ("failed", result.reason)
    assert [(n.action_text, n.status) for n in stored.nodes[1:]] == [("click [8]", "dead")] * 2 + [
        ("click [8]", "invalid")]
    assert stored.usage[0].calls == 3
    shown = format_run(stored)
    assert "Run r1: failed" in shown and "Reason:    stopped early: `click [8]` was proposed 3 times" in shown


@pytest.mark.parametrize("scripted", [[Rule(reply="I am not sure what to do here.")]], indirect=True)
def test_unparseable_answers_are_recorded_as_invalid_steps(scripted: ScriptedModelServer, store: RunStore) -> None:
    run_agent(scripted, SiteEnv(), store)
    stored = store.load_run("r1")
    assert [(n.action_text, n.status, n.url) for n in stored.nodes[1:]] == [("", "invalid", "http://shop.test/")] * 3
    assert "└── ★ #3 (no action)  invalid" in format_run(stored)


SCROLL_ON_ORDERS = [
    Rule(when_contains=["URL: http://shop.test/orders"], search_in="last_user", reply=cot("scroll [down]")),
    ANSWERS[1],
]


@dataclass
class HangingEnv(SiteEnv):
    """The second action never returns (`executing` is set once it is under way), so the run is stopped during it."""

    executing: asyncio.Event = field(default_factory=asyncio.Event)

    async def execute(self, action: Action, *, allow: object = None) -> ExecResult:
        if self.executed:
            self.executing.set()
            await asyncio.Event().wait()
        return await super().execute(action)


def cancel_during_second_action(scripted: ScriptedModelServer, store: RunStore, *message: str) -> RunResult | None:
    """Run r1 and cancel it (with `message`) while its second action is under way; the result its reporter got."""
    recorder = Recorder()

    async def main() -> None:
        config = LLMConfig(base_url=scripted.base_url, api_key=SecretStr("t"), model="m", max_retries=0)
        async with LLMClient(config) as client:
            executing = asyncio.Event()
            agent = greedy_agent(client, store=store)
            env = HangingEnv(executing=executing)
            run = asyncio.create_task(agent.run("task", env, recorder, run_id="r1"))  # type: ignore[arg-type]
            await executing.wait()
            run.cancel(*message)
            with pytest.raises(asyncio.CancelledError):
                await run

    asyncio.run(main())
    return recorder.finished_with


@pytest.mark.parametrize("scripted", [SCROLL_ON_ORDERS], indirect=True)
@pytest.mark.parametrize("message", [(), ("Cancelled via cancel scope 7f3a by <Task pending name='Task-9'>",)])
def test_a_stopped_run_is_recorded_as_stopped(scripted: ScriptedModelServer, store: RunStore,
                                              message: tuple[str, ...]) -> None:
    # A library's own cancel message (anyio's) is not a reason to show the user.
    shown = cancel_during_second_action(scripted, store, *message)
    stored = store.load_run("r1")
    assert (stored.run.status, stored.run.reason) == ("stopped", "stopped by the user")
    assert shown is not None and (shown.status, shown.reason) == ("stopped", "stopped by the user")
    assert stored.run.finished_at is not None and stored.usage[0].calls == 2
    # The step under way when the user stopped is not recorded, as it is not in the run's steps either; the model
    # had been asked on the orders page.
    assert [(n.action_text, n.url, n.status) for n in stored.nodes] == [
        ("", "http://shop.test/", "expanded"), ("click [7]", "http://shop.test/orders", "expanded")]
    # But it had been sent, and nobody knows what it did: `show` says so.
    assert stored.unfinished_action is not None and stored.unfinished_action.action_text == "scroll [down]"
    assert "Unknown:   `scroll [down]` was sent to http://shop.test/orders" in format_run(stored)


@pytest.mark.parametrize("scripted", [SCROLL_ON_ORDERS], indirect=True)
def test_a_run_whose_process_is_told_to_stop_keeps_its_calls_and_is_left_to_resume(
        scripted: ScriptedModelServer, store: RunStore) -> None:
    shown = cancel_during_second_action(scripted, store, TERMINATED)
    stored = store.load_run("r1")
    # Not "stopped by the user": interrupted, as a crash leaves a run, with the action in flight named, what the run
    # used and every model call it made; and it can be resumed. The terminal and the side panel say the same.
    assert stored.run.status == "interrupted" and stored.run.reason.startswith(TERMINATED)
    assert shown is not None and (shown.status, shown.reason) == ("interrupted", TERMINATED)
    assert "`scroll [down]` had been sent to the page and its outcome is unknown" in stored.run.reason
    assert stored.usage[0].calls == 2 and len(store.model_calls("r1")) == 2
    assert resume_point(stored, "task").unfinished == "scroll [down]"
    store.reopen_run("r1")


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_each_action_is_on_record_as_sent_before_it_runs_and_with_its_result_after(
        scripted: ScriptedModelServer, store: RunStore) -> None:
    class CheckingEnv(SiteEnv):
        async def execute(self, action: Action, *, allow: object = None) -> ExecResult:
            sent = store.load_run("r1").unfinished_action
            on_record.append(sent.action_text if sent is not None else None)
            return await super().execute(action)

    on_record: list[str | None] = []
    result, _ = run_agent(scripted, CheckingEnv(), store)
    assert result.status == "finished" and on_record == ["click [7]"]
    assert store.load_run("r1").unfinished_action is None
    assert [(e.kind, e.action_text, e.note) for e in store.audit_log("r1")] == [
        ("action_sent", "click [7]", ""), ("action_result", "click [7]", "done")]


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
@pytest.mark.parametrize(("error", "reason"), [
    (ExtensionError("tab_closed", "tab 7 was closed"), "stopped: the working tab was closed; nothing more was done"),
    (LinkTimeout("no Branchwise extension connected within 45 s"),
     "stopped: the extension went away and did not come back (no Branchwise extension connected within 45 s)"),
    (ExtensionError("cdp_error", "Input.dispatchMouseEvent: Detached"),
     "stopped: the extension could not go on (cdp_error: Input.dispatchMouseEvent: Detached)"),
])
def test_a_browser_that_cannot_go_on_stops_the_run_with_the_reason_in_the_users_terms(
        scripted: ScriptedModelServer, error: ExtensionError, reason: str) -> None:
    class FailingEnv(SiteEnv):
        async def execute(self, action: Action, *, allow: object = None) -> ExecResult:
            raise error

    result, _ = run_agent(scripted, FailingEnv())
    assert (result.status, result.reason) == ("failed", reason)


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_a_store_broken_from_the_start_stops_the_run_before_it_acts(scripted: ScriptedModelServer, store: RunStore,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    store.close()
    env = SiteEnv()
    result, recorder = run_agent(scripted, env, store)
    assert env.executed == [] and recorder.finished_with == result
    assert result.status == "failed" and "the run's record could not be written" in result.reason
    assert any("its end could not be recorded" in r.message for r in caplog.records)


def test_build_agent_hands_the_store_to_greedy(store: RunStore) -> None:
    async def main() -> None:
        async with LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m")) as client:
            model = ModelSetup(client=client, scripted=False, description="m")
            unheard = SimpleNamespace(on_event=lambda listener: lambda: None, on_link=lambda listener: lambda: None)
            gate = NetworkGate(unheard)
            options = RunOptions(max_steps=5)
            agent = build_agent(model, None, options, store, DenyApprover(), gate)  # type: ignore[arg-type]
            assert isinstance(agent, SearchAgent) and agent.store is store and agent.config.max_steps == 5
            assert agent.config.strategy == "greedy" and agent.gate is gate

    asyncio.run(main())


def stop_when(scripted: ScriptedModelServer, store: RunStore, reached: threading.Event, pause_s: float = 0.0,
              then: Callable[[], object] = lambda: None) -> None:
    """Run r1 and stop it (the user's stop) `pause_s` after `reached` is set; `then` runs once it is cancelled."""
    async def main() -> None:
        config = LLMConfig(base_url=scripted.base_url, api_key=SecretStr("t"), model="m", max_retries=0)
        async with LLMClient(config) as client:
            run = asyncio.create_task(greedy_agent(client, store=store).run(
                "task", SiteEnv(), Recorder(), run_id="r1"))  # type: ignore[arg-type]
            await asyncio.to_thread(reached.wait, 5)
            await asyncio.sleep(pause_s)
            run.cancel()
            then()
            with pytest.raises(asyncio.CancelledError):
                await run

    asyncio.run(main())


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_a_run_stopped_while_its_calls_are_being_written_keeps_each_call_once(
        scripted: ScriptedModelServer, store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    writing, stopped = threading.Event(), threading.Event()
    add_model_calls = RunStore.add_model_calls

    def slow(self: RunStore, records: Sequence[ModelCallRecord]) -> None:
        """The first write finishes only after the run was stopped (a write in its thread cannot be cut off)."""
        if not writing.is_set():
            writing.set()
            stopped.wait(5)
        add_model_calls(self, records)

    monkeypatch.setattr(RunStore, "add_model_calls", slow)
    stop_when(scripted, store, writing, then=stopped.set)
    assert store.load_run("r1").run.status == "stopped"
    assert [c.replies for c in store.model_calls("r1")] == [[cot("click [7]")]]


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_a_run_stopped_while_a_failed_calls_write_waits_to_retry_keeps_each_call_once(
        scripted: ScriptedModelServer, store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    failed = threading.Event()
    add_model_calls = RunStore.add_model_calls

    def locked_once(self: RunStore, records: Sequence[ModelCallRecord]) -> None:
        """The first write fails as a database another process holds does; the writer pauses, then tries again."""
        if not failed.is_set():
            failed.set()
            raise sqlite3.OperationalError("database is locked")
        add_model_calls(self, records)

    monkeypatch.setattr(RunStore, "add_model_calls", locked_once)
    stop_when(scripted, store, failed, pause_s=0.1)  # in the writer's pause before its second try
    assert store.load_run("r1").run.status == "stopped"
    assert [c.replies for c in store.model_calls("r1")] == [[cot("click [7]")]]


class FailingReporter(Recorder):
    """Fails at the first line of the run's end, as a terminal that closed did before its lines were dropped."""

    async def progress(self, run_id: str, text: str) -> None:
        if text.endswith(" completion tokens"):
            raise OSError(5, "Input/output error")


@pytest.mark.parametrize("scripted", [ANSWERS], indirect=True)
def test_a_reporter_that_fails_as_the_run_ends_cannot_keep_its_end_from_the_store(
        scripted: ScriptedModelServer, store: RunStore) -> None:
    async def main() -> None:
        llm = LLMConfig(base_url=scripted.base_url, api_key=SecretStr("t"), model="m", max_retries=0)
        async with LLMClient(llm) as client:
            env = SiteEnv()
            await greedy_agent(client, store=store).run("How much was order 1042?", env,  # type: ignore[arg-type]
                                                        FailingReporter(), run_id="r1")

    with pytest.raises(OSError):
        asyncio.run(main())
    stored = store.load_run("r1")
    assert (stored.run.status, stored.run.answer) == ("finished", "$54.10") and stored.usage[0].calls == 2
