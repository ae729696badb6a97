"""`branchwise explore URL`: exploration episodes on one site, at most `parallel` at once, each in a tab of its own,
and the demonstrations they leave kept in the run store under the site's name."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..agent.env import BrowserEnv, EnvConfig
from ..agent.reporting import RunReporter
from ..browser import BROWSER_FAILURES, Browser
from ..core.approval import DenyApprover
from ..core.budget import Limits
from ..core.tasks import gather_all
from ..safety.gate import NetworkGate
from ..safety.sites import SiteRules, host_of
from ..search.agent import SearchAgent, SearchConfig
from ..search.examples import site_of
from ..search.roles import ModelRoles
from ..store import RunStore
from .episode import ExploreConfig, ExploreEpisode
from .nnetnav import PERSONAS

log = logging.getLogger(__name__)

NO_QUESTIONS = "exploring never asks: anything that would change the site is refused"


class ExploreOptions(BaseModel):
    model_config = ConfigDict(frozen=True)
    episodes: int = Field(default=4, ge=1)
    # NNetNav ran at most 10 sessions at once on live sites; one is kind to a laptop and to the site.
    parallel: int = Field(default=1, ge=1, le=10)
    # The personas the episodes take in turn; empty: the shipped ones.
    personas: tuple[str, ...] = ()
    # What the demonstrations are kept by; None: the address's host (what runs on that site retrieve by).
    site_name: str | None = None
    episode: ExploreConfig = ExploreConfig()
    limits: Limits = Limits()


@dataclass(frozen=True)
class EpisodeOutcome:
    persona: str
    run_id: str
    status: str
    demonstrations: int
    steps: int
    note: str


def explore_rules(url: str, user: SiteRules) -> SiteRules:
    """Only the explored site's host, and never a site the user blocks."""
    return SiteRules.parse([host_of(url)], [str(p) for p in user.block], source="exploring's")


async def explore(url: str, options: ExploreOptions, roles: ModelRoles, browser: Browser, gate: NetworkGate | None,
                  store: RunStore, reporter: Callable[[], RunReporter], sites: SiteRules | None = None,
                  ) -> list[EpisodeOutcome]:
    """Run the episodes; each one's demonstrations are stored as soon as it ends (a crash loses no finished one).
    `sites`: the user's lists, whose block list exploring keeps to as well."""
    site = options.site_name or site_of(url)
    personas: Sequence[str] = options.personas or PERSONAS
    rules = explore_rules(url, sites or SiteRules())
    limit = asyncio.Semaphore(options.parallel)

    async def episode(k: int) -> EpisodeOutcome:
        persona = personas[k % len(personas)]
        async with limit:
            strategy = ExploreEpisode(options.episode, persona, site, rules)
            agent = SearchAgent(roles, browser, SearchConfig(limits=options.limits), store=store,
                                approver=DenyApprover(NO_QUESTIONS), gate=gate, strategy=strategy)
            tab = await browser.open_tab(url)
            try:
                env = BrowserEnv(browser, tab.tab_id, EnvConfig(sites=rules))
                result = await agent.run(f"Explore {url} as {persona}", env, reporter())
            finally:
                try:
                    await browser.close_tab(tab.tab_id)
                except BROWSER_FAILURES as exc:
                    log.info("could not close exploration tab %s: %s", tab.tab_id, exc)
            for demo in strategy.demos:
                store.add_demonstration(demo)
            return EpisodeOutcome(persona, result.run_id, result.status, len(strategy.demos), len(result.steps),
                                  strategy.pruned or result.reason)

    return await gather_all(episode(k) for k in range(options.episodes))
