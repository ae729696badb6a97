"""The sandbox sites a task config can name, each started fresh for one task: its base URL and its database."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..sandbox import ShopConfig, ShopServer
from ..sandbox.forum import ForumConfig, ForumServer
from ..sandbox.tracker import TrackerConfig, TrackerServer


@dataclass(frozen=True)
class RunningSite:
    # The WebArena placeholder name (SHOPPING for __SHOPPING__) and the config's site name (shopping).
    placeholder: str
    name: str
    base_url: str
    database: Path


class _Site(Protocol):
    @property
    def base_url(self) -> str: ...

    def start(self) -> object: ...

    def stop(self) -> None: ...


def _factory(placeholder: str, name: str, serve: Callable[[Path], _Site]) -> SiteFactory:
    """A fresh site of one kind under `work`: its database is `work/<name>.sqlite3`, seeded anew."""

    @contextlib.asynccontextmanager
    async def started(work: Path) -> AsyncIterator[RunningSite]:
        database = work / f"{name}.sqlite3"
        server = serve(database)
        await asyncio.to_thread(server.start)
        try:
            yield RunningSite(placeholder, name, server.base_url, database)
        finally:
            await asyncio.to_thread(server.stop)

    return started


SiteFactory = Callable[[Path], AbstractAsyncContextManager[RunningSite]]
# WebArena's site names and placeholders: the shop stands in for its shopping site, the forum for reddit (Postmill),
# the tracker for gitlab.
SANDBOXES: dict[str, SiteFactory] = {
    "shopping": _factory("SHOPPING", "shopping", lambda db: ShopServer(ShopConfig(db_path=db))),
    "reddit": _factory("REDDIT", "reddit", lambda db: ForumServer(ForumConfig(db_path=db))),
    "gitlab": _factory("GITLAB", "gitlab", lambda db: TrackerServer(TrackerConfig(db_path=db))),
}


class NoSandbox(ValueError):
    pass


@contextlib.asynccontextmanager
async def fresh_sites(names: Iterable[str], work: Path) -> AsyncIterator[list[RunningSite]]:
    """Every named site, freshly seeded under `work`, for the length of one task."""
    unknown = sorted(set(names) - set(SANDBOXES))
    if unknown:
        raise NoSandbox(f"no sandbox site {', '.join(unknown)} (this build has: {', '.join(SANDBOXES)})")
    async with contextlib.AsyncExitStack() as stack:
        yield [await stack.enter_async_context(SANDBOXES[name](work)) for name in dict.fromkeys(names)]
