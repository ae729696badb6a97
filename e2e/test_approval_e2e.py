"""A destructive action in best-first search, as a user meets it: `branchwise run --strategy best_first --confirm ask`
in a subprocess, real Chromium, the sandbox shop and a scripted model over HTTP. The plan must press "Add to cart" (a
POST form); the test answers the terminal prompt on stdin and checks the shop's database, not the script."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from branchwise.bench.scenarios import CART_PRODUCT, CART_TASK, cart_script
from branchwise.sandbox import ShopQueries, ShopServer
from branchwise.sandbox.database import fingerprint
from branchwise.scripted_model import ScriptedModelServer

from test_cli_e2e import base_env, branchwise

pytestmark = pytest.mark.e2e

PROMPT = "Allow it once? [y/N] "


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(cart_script()) as server:
        yield server


@dataclass
class Answered:
    returncode: int
    # Everything the terminal showed, and the part up to the approval prompt (empty when nobody was asked).
    output: str
    asked: str
    result: dict[str, object]
    data_dir: Path


def run_and_answer(tmp_path: Path, shop: ShopServer, model: ScriptedModelServer, confirm: str, answer: str,
                   timeout: float = 90) -> Answered:
    """`branchwise run` on the book's page with stdin on a pipe; types `answer` once the approval prompt shows."""
    product = ShopQueries(shop.config.db_path).product_by_name(CART_PRODUCT)
    env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                "BRANCHWISE_MODEL": "scripted"}
    out, data_dir, errors = tmp_path / "result.json", tmp_path / "data", tmp_path / "stderr.txt"
    args = ["run", CART_TASK, "--start-url", f"{shop.base_url}/product/{product.id}", "--launch", "--headless",
            "--strategy", "best_first", "--confirm", confirm, "--data-dir", str(data_dir), "--json", str(out)]
    chunks: list[bytes] = []
    seen = threading.Event()
    with errors.open("wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "branchwise.cli", *args], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=stderr)
    assert proc.stdin is not None and proc.stdout is not None
    stdout = proc.stdout.fileno()

    def read() -> None:
        # The prompt has no newline, so read whatever arrives rather than lines; EOF also wakes the test.
        while chunk := os.read(stdout, 4096):
            chunks.append(chunk)
            if PROMPT.encode() in b"".join(chunks):
                seen.set()
        seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        seen.wait(timeout)
        asked = b"".join(chunks).decode()
        if PROMPT in asked:
            proc.stdin.write(answer.encode())
            proc.stdin.flush()
        else:
            asked = ""
        proc.stdin.close()
        proc.wait(timeout)
        reader.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = b"".join(chunks).decode()
    assert out.exists(), output + errors.read_text()
    return Answered(proc.returncode, output, asked, json.loads(out.read_text()), data_dir)


def cart_rows(db_path: Path) -> list[tuple[int, int]]:
    """(product id, quantity) of every cart line in the shop, whoever's session it is in."""
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        return [tuple(row) for row in conn.execute("SELECT product_id, quantity FROM cart_lines")]


def show(run: Answered, tmp_path: Path) -> str:
    shown = branchwise("show", str(run.result["run_id"]), "--data-dir", str(run.data_dir), env=base_env(tmp_path))
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def audit(run: Answered, tmp_path: Path) -> str:
    shown = branchwise("audit", str(run.result["run_id"]), "--data-dir", str(run.data_dir), env=base_env(tmp_path))
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_approved_add_to_cart_runs_once_and_search_goes_on_from_the_cart(
        tmp_path: Path, shop: ShopServer, model: ScriptedModelServer) -> None:
    product = ShopQueries(shop.config.db_path).product_by_name(CART_PRODUCT)
    run = run_and_answer(tmp_path, shop, model, "ask", "y\n")
    assert run.returncode == 0, run.output

    # The prompt named the action, the button it presses, the page, and why it was flagged.
    assert f"on button 'Add to cart'\n  page: {shop.base_url}/product/{product.id}\n" in run.asked
    assert "  why flagged: the button 'Add to cart' submits a POST form to /cart/add\n" in run.asked

    # The shop really holds the book, once: approved means run exactly one time, never replayed.
    assert cart_rows(shop.config.db_path) == [(product.id, 1)]
    answer = f"Added {CART_PRODUCT} to your cart."
    assert run.result["status"] == "finished" and run.result["answer"] == answer
    assert f"Answer: {answer}" in run.output
    assert "changed the site: #1 is the new root" in run.output

    shown = show(run, tmp_path)
    assert "approved by user (terminal)" in shown
    assert "- the button 'Add to cart' submits a POST form to /cart/add" in shown
    # Everything before the change to the site is out of reach (the frontier was cleared); the cart page is the root.
    assert f"#0 (start) {shop.base_url}/product/{product.id}" in shown
    start_line = next(line for line in shown.splitlines() if "#0 (start)" in line)
    assert start_line.rstrip().endswith("invalid (left behind: #1 changed the site)")
    assert "#1 click [" in shown and "[destructive]" in shown
    assert "Chosen trajectory:\n  1. #1 click [" in shown and "2. #2 stop [Added" in shown
    assert shown.count("approved by user (terminal)") == 1, "the approved action is listed once"

    # The audit log: the verdict with its reasons, the question as the user saw it, then the answer and who gave it.
    logged = audit(run, tmp_path)
    kinds = [line.split()[2] for line in logged.splitlines() if line[:1].isdigit()]
    assert kinds.index("classified") < kinds.index("asked") < kinds.index("decided"), logged
    asked = next(line for line in logged.splitlines() if "  asked  " in line)
    assert "[destructive] on button 'Add to cart' at " + f"{shop.base_url}/product/{product.id}" in asked
    assert "why: the button 'Add to cart' submits a POST form to /cart/add" in logged
    assert "→ approved by user (terminal)" in logged and "note: y" in logged
    assert not model.unmatched()


@pytest.mark.parametrize(("confirm", "answer", "by"), [
    ("ask", "n\n", "user (terminal)"),
    ("deny", "", "policy (destructive actions are refused by --confirm deny)"),
])
def test_refused_add_to_cart_leaves_the_shop_unchanged_and_says_why(
        tmp_path: Path, shop: ShopServer, model: ScriptedModelServer, confirm: str, answer: str, by: str) -> None:
    before = fingerprint(shop.config.db_path)
    run = run_and_answer(tmp_path, shop, model, confirm, answer)
    assert run.returncode == 1, run.output
    assert bool(run.asked) == (confirm == "ask"), "only --confirm ask prompts"

    assert fingerprint(shop.config.db_path) == before, "no cart, no session: the shop's data is untouched"
    assert cart_rows(shop.config.db_path) == []
    assert "step 1:" not in run.output, "nothing ran in the browser"
    assert "not running `click [" in run.output and f"denied by {by}" in run.output
    assert run.result["status"] == "failed"
    assert "not allowed to run `click [" in str(run.result["reason"])
    assert "Run failed: search found no state better than where it started; not allowed to run" in run.output

    shown = show(run, tmp_path)
    assert f"denied by {by.split(' (')[0]}" in shown
    assert f"→ denied by {by.split(' (')[0]}" in audit(run, tmp_path)
