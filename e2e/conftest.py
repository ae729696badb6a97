"""e2e fixtures: one Chromium + backend per test module (launching is the slow part), a fresh shop per test."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from branchwise.sandbox import ShopConfig, ShopServer  # noqa: E402
from branchwise.store import RunRecord, RunStore  # noqa: E402

from harness import PAGES, Stack, running_stack, static_site  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if shutil.which("chromium") and shutil.which("chromedriver"):
        return
    skip = pytest.mark.skip(reason="chromium/chromedriver not installed (run `make setup`)")
    for item in items:
        if "e2e" in str(item.fspath):
            item.add_marker(skip)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("backend")) as s:
        yield s


@pytest.fixture(scope="module")
def pages_port() -> Iterator[int]:
    with static_site(PAGES) as port:
        yield port


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[ShopServer]:
    with ShopServer(ShopConfig(db_path=tmp_path / "shop.sqlite3")) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    """A run store holding one run, "r1", for tests that drive a run's pieces (the gate, an allowance) by hand."""
    with RunStore(tmp_path / "runs.sqlite3") as s:
        s.start_run(RunRecord(run_id="r1", task="e2e run"))
        yield s
