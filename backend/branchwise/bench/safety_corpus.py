"""Builds the labelled corpus of the destructive-action classifier from real actions on the three sandbox sites.

    python -m branchwise.bench.safety_corpus [--write] [--out PATH] [--sites shopping reddit gitlab]

Every case runs from a fresh state: a new site server on a copy of one seeded database (new port, fresh page), the
case's setup in the browser (sign in, fill a cart), its page loaded anew and any preparing steps (choose a size, type
a title). The tab is under the network gate throughout, as a run's tab is. Then the target is observed and inspected
(what the classifier sees), the site's database fingerprinted, the action executed in real Chromium through the
extension, and the database fingerprinted again: the label is whether the fingerprint changed. Every mutating request
the gate held during the action is recorded (and let through): it is what the gate would have asked about. The
buttons and links of sample pages are enumerated (click each); the forms and script-driven controls get written cases
(corpus_shop, corpus_forum, corpus_tracker).

Without --write it prints a summary and writes nothing. Takes about a quarter of an hour (one page load and setup per
case).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from ..actions import Action, Click, GoBack, GoForward, Goto, Hover, Press, Scroll, SelectOption, Type
from ..agent.env import BrowserEnv, EnvView
from ..browser import BrowserDisconnected
from ..config import ServerConfig
from ..launcher import ChromiumConfig
from ..link import BrowserEvent, ExtensionError
from ..protocol import RequestHeld
from ..safety.corpus import DEFAULT_CORPUS, CorpusElement, CorpusRecord, SafetyCorpus
from ..sandbox import DEFAULT_SEED, ShopConfig, ShopServer, create_shop_database
from ..sandbox.database import fingerprint
from ..sandbox.forum import ForumConfig, ForumServer, create_forum_database
from ..sandbox.tracker import TrackerConfig, TrackerServer, create_tracker_database
from ..session import Session, open_session
from .corpus_forum import forum_plan
from .corpus_shop import shop_plan
from .corpus_steps import Case, Page, SitePlan, Step, Target, goto
from .corpus_tracker import tracker_plan

log = logging.getLogger(__name__)

T = TypeVar("T")

# A request a click started may still be in flight when the tab reports "complete".
SETTLE_SECONDS = 0.4


class SiteServer(Protocol):
    @property
    def base_url(self) -> str: ...

    def start(self) -> object: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class CorpusSite:
    """A sandbox site the corpus covers; its records name it by one fixed origin (each case really ran on its own
    port)."""

    name: str
    origin: str
    create_database: Callable[[Path, int], object]
    # A server on an existing database, never reseeding it.
    serve: Callable[[Path], SiteServer]
    plan: Callable[[Path], SitePlan]


SITES: dict[str, CorpusSite] = {site.name: site for site in (
    CorpusSite("shopping", "http://127.0.0.1:8800", create_shop_database,
               lambda db: ShopServer(ShopConfig(db_path=db, reset=False)), shop_plan),
    CorpusSite("reddit", "http://127.0.0.1:8801", create_forum_database,
               lambda db: ForumServer(ForumConfig(db_path=db, reset=False)), forum_plan),
    CorpusSite("gitlab", "http://127.0.0.1:8802", create_tracker_database,
               lambda db: TrackerServer(TrackerConfig(db_path=db, reset=False)), tracker_plan),
)}


def to_action(step: Step, view: EnvView) -> Action:
    """The typed action for a step on the observed page; LookupError when its element is not there."""
    element_id = None
    if step.target is not None:
        assert view.page is not None, "a dialog is open"
        found = [e.id for e in view.page.elements.values() if step.target.matches(e)]
        if len(found) <= step.target.occurrence:
            raise LookupError(f"no {step.target} on {view.url}")
        element_id = found[step.target.occurrence]
    match step.kind:
        case "click":
            assert element_id is not None
            return Click(element_id)
        case "type":
            assert element_id is not None
            return Type(element_id, step.text, step.enter)
        case "press":
            return Press(step.keys, element_id)
        case "select":
            assert element_id is not None
            return SelectOption(element_id, step.values)
        case "hover":
            assert element_id is not None
            return Hover(element_id)
        case "scroll":
            return Scroll("down")
        case "goto":
            return Goto(step.url)
        case "go_back":
            return GoBack()
        case "go_forward":
            return GoForward()
    raise ValueError(f"unknown step kind {step.kind}")


class GatedTab:
    """The one working tab, under the network gate as a run's tab is: every mutating request its pages send is held,
    recorded while an action is measured, and let through."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.tab_id = 0
        self.recording: list[str] | None = None
        self._releases: set[asyncio.Task[None]] = set()
        session.browser.on_event(self._on_event)

    async def env(self, url: str) -> BrowserEnv:
        if not self.tab_id:
            self.tab_id = (await self.session.browser.open_tab(url)).tab_id
        await self.session.browser.gate_tab(self.tab_id, True)  # idempotent; again after a worker restart
        return BrowserEnv(self.session.browser, self.tab_id)

    def _on_event(self, event: BrowserEvent) -> None:
        if not isinstance(event, RequestHeld):
            return
        if self.recording is not None:
            self.recording.append(f"{event.method} {event.url}")
        task = asyncio.ensure_future(self.session.browser.release_request(event.hold_id, True))
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def released(self) -> None:
        """Every hold seen so far has been answered."""
        if self._releases:
            await asyncio.wait(set(self._releases))


@dataclass
class Runner:
    site: CorpusSite
    plan: SitePlan
    tab: GatedTab
    template: Path
    work: Path

    async def fresh(self, state: str, server: SiteServer) -> BrowserEnv:
        """The working tab on a fresh site in `state`."""
        env = await self.tab.env(server.base_url + "/")
        for path, steps in self.plan.setups[state]:
            await self.perform(env, server.base_url, goto(path))
            for step in steps:
                await self.perform(env, server.base_url, step)
        return env

    async def perform(self, env: BrowserEnv, base: str, step: Step) -> None:
        if step.kind == "goto" and step.url.startswith("/"):
            step = Step("goto", url=base + step.url)
        result = await env.execute(to_action(step, await env.observe()))
        if not result.ok:
            raise LookupError(f"{step.describe()} failed: {result.error}")

    @property
    def database(self) -> Path:
        return self.work / f"{self.site.name}.sqlite3"

    @contextlib.contextmanager
    def server(self) -> Iterator[SiteServer]:
        """A fresh server on a fresh copy of the seeded database."""
        shutil.copyfile(self.template, self.database)
        server = self.site.serve(self.database)
        server.start()
        try:
            yield server
        finally:
            server.stop()

    async def enumerate(self, page: Page) -> list[Case]:
        with self.server() as server:
            env = await self.fresh(page.state, server)
            await self.perform(env, server.base_url, goto(page.path))
            view = await env.observe()
        assert view.page is not None
        seen: dict[tuple[str, str], int] = {}
        buttons: list[Case] = []
        links: list[Case] = []
        for element in view.page.elements.values():
            if element.role not in ("link", "button"):
                continue
            key = (element.role, element.name)
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            if element.role == "button":
                buttons.append(Case(page.state, page.path, Step("click", Target("button", element.name, occurrence))))
            elif occurrence == 0:
                links.append(Case(page.state, page.path, Step("click", Target("link", element.name))))
        return _sample(buttons, page.buttons) + _sample(links, page.links)

    async def measure(self, case: Case) -> CorpusRecord:
        with self.server() as server:
            base = server.base_url
            env = await self.fresh(case.state, server)
            await self.perform(env, base, goto(case.path))
            for step in case.prepare:
                await self.perform(env, base, step)
            action_step = Step("goto", url=base + case.action.url) if case.action.kind == "goto" else case.action
            view = await env.observe()
            action = to_action(action_step, view)
            element = facts = None
            if action.element_id is not None and view.page is not None:
                info = view.page.elements[action.element_id]
                element = CorpusElement(role=info.role, name=info.name, props=dict(info.props),
                                        ancestors=[(s.role, s.name) for s in info.locator.ancestors])
                facts = (await env.inspect([action.element_id])).get(action.element_id)
            database = self.database
            await self.tab.released()
            before = fingerprint(database)
            held: list[str] = []
            self.tab.recording = held
            try:
                result = await env.execute(action)
                await asyncio.sleep(SETTLE_SECONDS)
                await self.tab.released()
            finally:
                self.tab.recording = None
            after = fingerprint(database)
            url_after = (await env.observe()).url
            record = CorpusRecord(id=f"{self.site.name} {case.id}", site=self.site.name, state=case.state,
                                  page_url=view.url, action=action.to_text(), element=element, facts=facts,
                                  changed_server_state=before != after, held=held, ok=result.ok, error=result.error,
                                  url_after=url_after)
            # One origin per site: each case ran on its own port.
            return CorpusRecord.model_validate_json(record.model_dump_json().replace(base, self.site.origin))


def _sample(cases: list[Case], count: int | None) -> list[Case]:
    """`count` of `cases` spread evenly in page order (None: all)."""
    if count is None or count >= len(cases):
        return cases
    stride = len(cases) / count
    return [cases[int(i * stride)] for i in range(count)]


async def _twice(session: Session, attempt: Callable[[], Awaitable[T]]) -> T:
    """Runs `attempt` again once if the extension's worker restarted under it (it reconnects within a second)."""
    try:
        return await attempt()
    except BrowserDisconnected as exc:
        log.info("%s; trying again once the extension is back", exc)
        await session.browser.connected()
        return await attempt()


async def build_site(session: Session, tab: GatedTab, site: CorpusSite, work: Path) -> list[CorpusRecord]:
    template = work / f"{site.name}-template.sqlite3"
    site.create_database(template, DEFAULT_SEED)
    runner = Runner(site, site.plan(template), tab, template, work)
    cases = list(runner.plan.written)
    for page in runner.plan.pages:
        cases += await _twice(session, functools.partial(runner.enumerate, page))
    unique = list({case.id: case for case in cases}.values())
    records: list[CorpusRecord] = []
    for n, case in enumerate(unique, 1):
        try:
            records.append(await _twice(session, functools.partial(runner.measure, case)))
        except (LookupError, ExtensionError) as exc:
            # The element is not there, or the browser could not act on it (not rendered, covered): no record.
            log.warning("skipped %s %s: %s", site.name, case.id, exc)
            continue
        log.info("%s %d/%d %s -> %s%s", site.name, n, len(unique), case.id,
                 "changed" if records[-1].changed_server_state else "unchanged",
                 f", gate held {', '.join(records[-1].held)}" if records[-1].held else "")
    return records


async def build(work: Path, sites: Sequence[CorpusSite] = tuple(SITES.values())) -> SafetyCorpus:
    async with open_session(ServerConfig(port=0, data_dir=work / "data"), ChromiumConfig(headless=True)) as session:
        tab = GatedTab(session)
        records: list[CorpusRecord] = []
        for site in sites:
            records += await build_site(session, tab, site, work)
    return SafetyCorpus(
        description="Actions taken in real Chromium on the sandbox sites (branchwise.bench.safety_corpus), the tab "
                    "under the network gate; changed_server_state compares the site's SQLite fingerprint before and "
                    "after each action, held lists the mutating requests the gate held during it.",
        origins={site.name: site.origin for site in sites}, seed=DEFAULT_SEED, records=records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write the corpus (default: only print a summary)")
    parser.add_argument("--out", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sites", nargs="+", choices=sorted(SITES), default=list(SITES))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory(prefix="branchwise-safety-corpus-") as tmp:
        corpus = asyncio.run(build(Path(tmp), [SITES[name] for name in args.sites]))
    for name in args.sites:
        records = [r for r in corpus.records if r.site == name]
        changed = sum(r.changed_server_state for r in records)
        held = sum(bool(r.held) for r in records)
        sys.stdout.write(f"{name}: {len(records)} actions, {changed} changed server state, the gate held a request "
                         f"in {held}\n")
    if args.write:
        args.out.write_text(corpus.model_dump_json(indent=1, exclude_defaults=True) + "\n")
        sys.stdout.write(f"wrote {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
