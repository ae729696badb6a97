"""`branchwise explore` (NNetNav) on the sandbox shop: real Chromium with the extension, the real backend, a scripted
model over HTTP. The episode runs only what changes nothing (its try to add to the cart is refused without asking, and
the shop's database shows an empty cart), its demonstration is stored, relabelled, listed by `show --demos`, and a
later `run --examples` on that site shows it to the model, while a run without the flag does not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from branchwise.bench.scenarios import EXPLORED, PLANTER_TASK, explore_script
from branchwise.sandbox import ShopServer
from branchwise.scripted_model import ScriptedModelServer

from test_cli_e2e import base_env, branchwise

pytestmark = pytest.mark.e2e


def cart_lines(db_path: Path) -> int:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM cart_lines").fetchone()[0])


def test_exploring_the_shop_changes_nothing_and_teaches_later_runs(tmp_path: Path, shop: ShopServer) -> None:
    data_dir = tmp_path / "data"
    with ScriptedModelServer(explore_script()) as model:
        env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                    "BRANCHWISE_MODEL": "scripted"}
        explored = branchwise("explore", shop.base_url + "/", "--launch", "--headless", "--episodes", "1",
                              "--steps", "4", "--delay", "0", "--persona", "a gardener", "--data-dir", str(data_dir),
                              env=env, timeout=300)
        printed = explored.stdout + explored.stderr
        assert explored.returncode == 0, printed
        assert "a gardener: 1 demonstration(s) from 4 step(s)" in printed
        assert "not exploring `click" in printed and "it is destructive" in printed
        assert cart_lines(shop.config.db_path) == 0
        rules = [r.rule for r in model.requests()]
        assert "explore: add to cart" in rules and rules.count("reward") == 1

        site = shop.base_url.split("://", 1)[1]
        listed = branchwise("show", "--demos", site, "--data-dir", str(data_dir), env=env)
        assert listed.returncode == 0, listed.stderr
        assert EXPLORED in listed.stdout and "score 5/5" in listed.stdout and "as a gardener" in listed.stdout
        assert "stop [Books]" in listed.stdout
        other = branchwise("show", "--demos", "elsewhere.example", "--data-dir", str(data_dir), env=env)
        assert "No demonstrations for elsewhere.example yet" in other.stdout and site in other.stdout

        policy_prompts: dict[bool, list[str]] = {}
        for examples in (True, False):
            before = len(model.requests())
            run = branchwise("run", PLANTER_TASK, "--start-url", shop.base_url + "/", "--launch", "--headless",
                             "--strategy", "greedy", "--data-dir", str(data_dir), "--confirm", "deny",
                             *(["--examples"] if examples else []), env=env, timeout=300)
            assert run.returncode == 0, run.stdout + run.stderr
            policy_prompts[examples] = [r.prompt.last_user for r in model.requests()[before:]
                                        if r.rule and not r.rule.startswith("explore")]
    assert policy_prompts[True] and all(f"Task: {EXPLORED}" in p for p in policy_prompts[True])
    assert "I search the shop for the book by name." in policy_prompts[True][0]
    assert not any(EXPLORED in p for p in policy_prompts[False])
