"""`branchwise run --launch` and `branchwise demo`, as a user runs them: a subprocess, real Chromium, the shop, and a
scripted model reached over real HTTP. The answer is checked against the shop's database, not against the script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from branchwise.demo.task import DEMO_TASK
from branchwise.models import bundled_demo_script
from branchwise.sandbox import ShopConfig, ShopQueries, ShopServer, create_shop_database
from branchwise.scripted_model import ScriptedModelServer

pytestmark = pytest.mark.e2e


def cheapest_garden_price(db_path: Path) -> str:
    cheapest = ShopQueries(db_path).cheapest_in_category("garden")
    assert cheapest is not None
    return f"${cheapest.price_cents / 100:.2f}"


def branchwise(*args: str, env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "branchwise.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "BRANCHWISE_MODEL")}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    return env


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(bundled_demo_script()) as server:
        yield server


def test_run_launch_answers_a_question_about_the_shop(tmp_path: Path, shop: ShopServer,
                                                      model: ScriptedModelServer) -> None:
    env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                "BRANCHWISE_MODEL": "scripted"}
    out = tmp_path / "result.json"
    proc = branchwise("run", DEMO_TASK, "--start-url", shop.base_url + "/", "--launch", "--headless",
                      "--json", str(out), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    expected = cheapest_garden_price(shop.config.db_path)
    assert f"Answer: {expected}" in proc.stdout
    assert "step 1: click [" in proc.stdout, "steps are shown live"

    result = json.loads(out.read_text())
    assert result["status"] == "finished" and result["answer"] == expected
    urls = [step["url"] for step in result["steps"]]
    # Each step is shown with the page it led to: the first click opened the Garden category.
    assert urls[0].startswith(shop.base_url + "/category/garden")
    assert urls[-1].startswith(shop.base_url + "/category/garden") and "sort=price-asc" in urls[-1]
    assert all(step["observation_chars"] > 500 and step["observation_tokens"] > 100 for step in result["steps"])
    assert [step["action"].split(" ")[0] for step in result["steps"]] == ["click", "select_option", "click", "stop"]
    assert result["usage"]["calls"] == len(result["steps"])

    # The model really read the shop through the extension: the prompts carry the live page.
    first_prompt = model.requests()[0].last_user
    assert "link 'Garden'" in first_prompt and f"URL: {shop.base_url}/" in first_prompt
    assert not model.unmatched()


def test_demo_runs_with_the_scripted_model_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    proc = branchwise("demo", "--headless", "--json", str(out), env=base_env(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SCRIPTED" in proc.stdout and "No model configured" in proc.stdout

    reference = tmp_path / "reference.sqlite3"
    create_shop_database(reference, ShopConfig(db_path=reference).seed)
    result = json.loads(out.read_text())
    assert result["scripted_model"] is True
    assert result["answer"] == cheapest_garden_price(reference)
