"""What the side panel is offered when an extension connects: the runs a crash cut short, each resumable or saying why
not, and a resume that refuses what it cannot go on with."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from branchwise.agent.env import EnvConfig
from branchwise.agent.records import RunResult
from branchwise.core.status import TERMINATED
from branchwise.link import RunRefused
from branchwise.models import ModelSetup
from branchwise.protocol import ListDemos, ResumeRun, RunUpdate, StopRun, TabInfo
from branchwise.runs import RunManager
from branchwise.safety.secrets import mask_task
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.resume import ResumePoint
from branchwise.search.roles import ModelRoles
from branchwise.store import DemonstrationRecord, DemoStep, NodeRecord, RunRecord, RunStore

from fake_models import FakeModel


@dataclass
class PanelLink:
    sent: list[RunUpdate] = field(default_factory=list)

    async def send(self, message: RunUpdate) -> None:
        self.sent.append(message)


@dataclass
class Hub:
    link: PanelLink = field(default_factory=PanelLink)
    start_run_handler: object = None
    stop_run_handler: object = None
    resume_run_handler: object = None
    list_demos_handler: object = None

    def add_link_listener(self, listener: object) -> object:
        return lambda: None


@dataclass
class Browser:
    open_tabs: tuple[int, ...]
    hub: Hub = field(default_factory=Hub)

    async def list_tabs(self) -> list[TabInfo]:
        return [TabInfo(tab_id=t, index=i, url="http://shop.test/", title="Shop") for i, t in enumerate(self.open_tabs)]


def record(store: RunStore, run_id: str, tab_id: int, task: str = "Add the book to my cart",
           status: str = "interrupted") -> None:
    store.start_run(RunRecord(run_id=run_id, task=task, strategy="greedy", tab_id=tab_id))
    store.upsert_node(NodeRecord(run_id=run_id, node_id=0, url="http://shop.test/", observation_text="[1] link"))
    store.finish_run(run_id, status)  # type: ignore[arg-type]


def manager(store: RunStore, browser: Browser) -> RunManager:
    fake = FakeModel.always("stop [done]")
    agent = SearchAgent(ModelRoles.shared(fake), None)
    return RunManager(browser, ModelSetup(fake, True, "scripted"),  # type: ignore[arg-type]
                      agent, EnvConfig(), lambda point: agent, store=store)


def test_the_panel_is_offered_interrupted_runs_with_why_one_cannot_go_on(tmp_path: Path) -> None:
    browser = Browser(open_tabs=(7,))
    with RunStore(tmp_path / "runs.sqlite3") as store:
        record(store, "open", 7)
        record(store, "closed", 8)
        record(store, "secret", 7, task=mask_task("Log in with password hunter22"))
        record(store, "done", 7, status="finished")
        asyncio.run(manager(store, browser).offer())
    offers = {u.run_id: u for u in browser.hub.link.sent}
    assert set(offers) == {"open", "closed", "secret"}
    assert all(u.status == "interrupted" for u in offers.values())
    assert offers["open"].resumable and not offers["closed"].resumable and not offers["secret"].resumable
    assert "the tab it worked in is closed" in offers["closed"].message
    assert "give the task again" in offers["secret"].message


def test_resume_refuses_a_run_whose_tab_is_gone_with_the_reason(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        record(store, "closed", 8)
        runs = manager(store, Browser(open_tabs=(7,)))
        with pytest.raises(RunRefused, match="the tab it worked in is closed"):
            asyncio.run(runs.resume(ResumeRun(run_id="closed")))
        assert store.load_run("closed").run.status == "interrupted"


def test_a_run_going_on_when_the_panel_reconnects_is_announced_to_it(tmp_path: Path) -> None:
    run = WaitingRun()
    browser = Browser(open_tabs=(7,))

    async def main(runs: RunManager) -> None:
        runs.tasks["r1"] = asyncio.create_task(run())
        runs.shown_tasks["r1"] = "Add the book to my cart"
        await asyncio.sleep(0)
        await runs.offer()
        await runs.stop(StopRun(run_id="r1"))
        await asyncio.sleep(0.3)

    with RunStore(tmp_path / "runs.sqlite3") as store:
        asyncio.run(main(manager(store, browser)))
    # The panel marked it cut off when its connection closed: the update turns it running again.
    assert [(u.run_id, u.status, u.task) for u in browser.hub.link.sent] == [
        ("r1", "progress", "Add the book to my cart")]


def test_a_resumed_run_goes_on_with_the_agent_made_for_it_not_the_backends(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A run goes on as it was started (its strategy, profile, temperature, limits: `cli.resumed_options`), whatever
    the backend that resumes it was started with."""
    fake = FakeModel.always("stop [done]")
    own = SearchAgent(ModelRoles.shared(fake), None, SearchConfig(strategy="greedy", temperature=0.0))
    asked: list[str] = []
    launched: list[tuple[SearchAgent, str, int]] = []

    def agent_for(point: ResumePoint) -> SearchAgent:
        asked.append(point.stored.run.run_id)
        return own

    with RunStore(tmp_path / "runs.sqlite3") as store:
        record(store, "open", 7)
        runs = RunManager(Browser(open_tabs=(7,)), ModelSetup(fake, True, "scripted"),  # type: ignore[arg-type]
                          SearchAgent(ModelRoles.shared(fake), None, SearchConfig(strategy="best_first")),
                          EnvConfig(), agent_for, store=store)
        monkeypatch.setattr(runs, "_launch", lambda agent, run_id, task, tab_id, resume: launched.append(
            (agent, run_id, tab_id)))
        assert asyncio.run(runs.resume(ResumeRun(run_id="open"))) == "open"
        assert store.load_run("open").run.status == "running"
    assert asked == ["open"] and launched == [(own, "open", 7)]


def test_a_backend_that_is_stopping_resumes_nothing_and_leaves_the_run_to_resume_later(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        record(store, "open", 7)
        runs = manager(store, Browser(open_tabs=(7,)))
        runs.closing = True
        with pytest.raises(RunRefused, match="stopping"):
            asyncio.run(runs.resume(ResumeRun(run_id="open")))
        assert store.load_run("open").run.status == "interrupted" and not runs.tasks


def test_the_newest_interruption_is_offered_first_even_for_a_run_started_long_ago(tmp_path: Path) -> None:
    browser = Browser(open_tabs=(7,))
    with RunStore(tmp_path / "runs.sqlite3") as store:
        record(store, "old", 7)  # started first ...
        for run_id in ("a", "b", "c"):
            record(store, run_id, 7)
        store.reopen_run("old")  # ... resumed, and cut short again last
        store.finish_run("old", "interrupted")
        asyncio.run(manager(store, browser).offer())
    assert [u.run_id for u in browser.hub.link.sent] == ["old", "c", "b"]


def test_the_panel_is_told_what_exploring_learnt_about_its_tabs_site_only(tmp_path: Path) -> None:
    with RunStore(tmp_path / "runs.sqlite3") as store:
        steps = [DemoStep(url="http://shop.test:8800/", action_text="click [1]")]
        for site, instruction in (("shop.test:8800", "Open Garden"), ("shop.test:9900", "Open Kitchen"),
                                  ("shop.test:8800", "Sort by price")):
            store.add_demonstration(DemonstrationRecord(site=site, instruction=instruction, steps=steps, score=4))
        runs = manager(store, Browser(open_tabs=(7,)))
        listed = asyncio.run(runs.list_demos(ListDemos(url="http://shop.test:8800/category/garden?page=2")))
        assert listed.site == "shop.test:8800"
        assert [d.instruction for d in listed.demos] == ["Sort by price", "Open Garden"]
        assert listed.demos[0].steps == 1 and listed.demos[0].score == 4
        assert asyncio.run(runs.list_demos(ListDemos(url="about:blank"))).demos == []


@dataclass
class WaitingRun:
    """A side-panel run that works until cancelled, then takes a while to write its end."""

    cancelled_with: list[tuple[object, ...]] = field(default_factory=list)
    ended: bool = False

    async def __call__(self) -> RunResult:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError as exc:
            self.cancelled_with.append(exc.args)
            await asyncio.sleep(0.2)  # writing its end: a second cancel here would lose it
            self.ended = True
            raise
        raise AssertionError("never reached: the run waits until it is stopped")


def test_a_backend_that_stops_ends_its_runs_with_the_reason_and_takes_no_more(tmp_path: Path) -> None:
    run = WaitingRun()

    async def main(runs: RunManager) -> None:
        runs.attach()
        runs.tasks["r1"] = asyncio.create_task(run())
        await asyncio.sleep(0)
        await runs.shutdown((TERMINATED,))
        with pytest.raises(RunRefused, match="stopping"):
            runs._launch(runs.agent, "r2", "another task", 7)

    browser = Browser(open_tabs=(7,))
    with RunStore(tmp_path / "runs.sqlite3") as store:
        asyncio.run(main(manager(store, browser)))
    assert run.cancelled_with == [(TERMINATED,)] and run.ended
    assert browser.hub.start_run_handler is None and browser.hub.resume_run_handler is None


def test_a_run_the_user_stopped_ends_as_stopped_when_stop_is_clicked_again_or_the_backend_stops_during_its_end(
        tmp_path: Path) -> None:
    run = WaitingRun()

    async def main(runs: RunManager) -> None:
        runs.attach()
        runs.tasks["r1"] = asyncio.create_task(run())
        await asyncio.sleep(0)
        await runs.stop(StopRun(run_id="r1"))
        await asyncio.sleep(0.05)
        await runs.stop(StopRun(run_id="r1"))
        await runs.shutdown((TERMINATED,))

    with RunStore(tmp_path / "runs.sqlite3") as store:
        asyncio.run(main(manager(store, Browser(open_tabs=(7,)))))
    # Stopped by the user and not cancelled again while it wrote its end.
    assert run.cancelled_with == [()] and run.ended
