"""The sandbox sites a task config can name, each started fresh for one task: its base URL and its database."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import ShopConfig, ShopServer


@dataclass(frozen=True)
class RunningSite:
    # The WebArena placeholder name (SHOPPING for __SHOPPING__) and the config's site name (shopping).
    placeholder: str
    name: str
    base_url: str
    database: Path


@contextlib.asynccontextmanager
async def _shop(work: Path) -> AsyncIterator[RunningSite]:
    server = ShopServer(ShopConfig(db_path=work / "shopping.sqlite3"))
    await asyncio.to_thread(server.start)
    try:
        yield RunningSite("SHOPPING", "shopping", server.base_url, server.config.db_path)
    finally:
        await asyncio.to_thread(server.stop)


SiteFactory = Callable[[Path], AbstractAsyncContextManager[RunningSite]]
SANDBOXES: dict[str, SiteFactory] = {"shopping": _shop}


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
