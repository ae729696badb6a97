"""The confirmation card, as a user meets it: a run started from the side panel (best-first search, scripted model over
HTTP, the sandbox shop) wants to press "Add to cart" (a POST form, so destructive). The panel shows what, where, the
element and why, the element is highlighted on the page, and the user's click (or its absence) decides; the shop's
SQLite says what really happened."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from branchwise.agent.env import EnvConfig
from branchwise.bench.scenarios import CART_PRODUCT, CART_TASK, cart_script
from branchwise.config import EXTENSION_ID
from branchwise.core.approval import new_nonce
from branchwise.llm import LLMClient, LLMConfig
from branchwise.models import ModelSetup
from branchwise.protocol import ConfirmRequest
from branchwise.runs import RunManager
from branchwise.safety.confirm import ConfirmConfig, SidePanelApprover
from branchwise.sandbox import ShopQueries, ShopServer
from branchwise.sandbox.database import fingerprint
from branchwise.scripted_model import ScriptedModelServer
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.store import AuditRecord, RunStore

from harness import Stack, click_card

pytestmark = pytest.mark.e2e
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel.html"
REASON = "the button 'Add to cart' submits a POST form to /cart/add"


@dataclass
class PanelRuns:
    """The backend takes runs from the side panel and asks on the card, with this timeout."""

    stack: Stack
    store_path: Path
    approver: SidePanelApprover | None = None
    client: LLMClient | None = None
    manager: RunManager | None = None

    def attach(self, model: ScriptedModelServer, timeout: float) -> None:
        async def go() -> None:
            self.client = LLMClient(LLMConfig(base_url=model.base_url, api_key=SecretStr("test"), model="scripted"))
            setup = ModelSetup(self.client, True, "scripted")
            browser = self.stack.session.browser
            self.approver = SidePanelApprover(browser.hub, ConfirmConfig(timeout_seconds=timeout))
            agent = SearchAgent(setup.roles, browser, SearchConfig(strategy="best_first"),
                                store=RunStore.open(self.store_path), approver=self.approver)
            self.manager = RunManager(browser, setup, agent, EnvConfig(), lambda point: agent)
            self.manager.attach()

        self.stack.call(go())

    def detach(self) -> None:
        self.stack.session.hub.start_run_handler = None
        if self.manager is not None:
            # A run a failed test left behind must not outlive its model.
            self.stack.call(stop_all(self.manager))
        if self.approver is not None:
            self.approver.close()
        if self.client is not None:
            self.stack.call(self.client.aclose())

    def audit(self) -> list[AuditRecord]:
        with RunStore.open(self.store_path) as store:
            return store.audit_log(None, 100)


async def stop_all(manager: RunManager) -> None:
    for task in manager.tasks.values():
        task.cancel()
    await asyncio.gather(*manager.tasks.values(), return_exceptions=True)


@pytest.fixture
def panel_runs(stack: Stack, tmp_path: Path) -> Iterator[PanelRuns]:
    runs = PanelRuns(stack, tmp_path / "runs.sqlite3")
    yield runs
    runs.detach()


@pytest.fixture
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(cart_script()) as server:
        yield server


def text_of(driver: WebDriver, css: str) -> str:
    found = driver.find_elements(By.CSS_SELECTOR, css)
    return found[0].text if found else ""


@dataclass(frozen=True)
class Started:
    driver: WebDriver
    url: str
    shop_tab: str
    panel_tab: str


def start_from_the_panel(stack: Stack, shop: ShopServer) -> Started:
    """The user's tab shows the book; the panel (opened as a tab) starts the cart task on it."""
    product = ShopQueries(shop.config.db_path).product_by_name(CART_PRODUCT)
    url = f"{shop.base_url}/product/{product.id}"
    driver = stack.driver
    driver.switch_to.window(driver.window_handles[0])
    driver.switch_to.new_window("tab")
    driver.get(url)
    shop_tab = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(PANEL)
    WebDriverWait(driver, 15).until(lambda d: text_of(d, "#status") == "Connected to the backend")
    driver.find_element(By.ID, "task").send_keys(CART_TASK)
    driver.find_element(By.ID, "start").click()
    return Started(driver, url, shop_tab, driver.current_window_handle)


def shop_tab_shot(started: Started) -> bytes:
    """A screenshot of the shop tab's viewport: the DevTools overlay of a highlight shows in it (an element screenshot,
    captured beyond the viewport, would not have it)."""
    driver = started.driver
    driver.switch_to.window(started.shop_tab)
    try:
        return driver.get_screenshot_as_png()
    finally:
        driver.switch_to.window(started.panel_tab)


# The panel redraws the card and the runs on every change: read each in one go, never keep an element.
CARD_JS = """
const card = document.getElementById("confirm-card");
if (!card) return null;
const text = (css) => card.querySelector(css)?.textContent || "";
return {approval_id: card.dataset.approvalId, run_id: card.dataset.runId, highlighted: card.dataset.highlighted,
        what: text(".confirm-what"), url: text(".confirm-url"), element: text(".confirm-element"),
        reasons: [...card.querySelectorAll(".confirm-reasons li")].map((li) => li.textContent),
        countdown: text(".confirm-countdown")};
"""
RUN_JS = """
const run = document.querySelector(`.run[data-run-id="${arguments[0]}"]`);
if (!run) return null;
const text = (css) => run.querySelector(css)?.textContent || "";
return {status: text("header .badge"), answer: text(".answer"), error: text("p.error"),
        log: [...run.querySelectorAll("ol.run-log li.log-line")].map((li) => li.textContent),
        steps: run.querySelectorAll("li.step").length, card_open: Boolean(document.getElementById("confirm-card"))};
"""


@dataclass(frozen=True)
class Card:
    approval_id: str
    run_id: str


def the_card(driver: WebDriver, url: str) -> Card:
    """Waits for the card and checks what it tells the user: the action, the page, the element and why."""
    # data-highlighted is set only once Overlay.highlightNode succeeded on the book's page.
    card = WebDriverWait(driver, 20).until(
        lambda d: (shown := d.execute_script(CARD_JS)) and shown["highlighted"] == "true" and shown)
    assert card["what"].startswith("click [")
    assert card["url"] == url
    assert card["element"] == "button 'Add to cart'"
    # The classifier's reasons, one item each (it may give more than this one).
    assert REASON in card["reasons"]
    assert "Denied automatically in" in card["countdown"]
    return Card(card["approval_id"], card["run_id"])


def cart_rows(db_path: Path) -> list[tuple[int, int]]:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        return [tuple(row) for row in conn.execute("SELECT product_id, quantity FROM cart_lines")]


def run_ends(driver: WebDriver, card: Card, status: str) -> dict[str, Any]:
    """The card's run as the panel shows it, once it ended with `status` (the panel lists earlier runs too)."""
    run: dict[str, Any] = WebDriverWait(driver, 30).until(
        lambda d: (shown := d.execute_script(RUN_JS, card.run_id)) and shown["status"] == status and shown)
    assert not run["card_open"], "the card went away"
    return run


def decided(runs: PanelRuns, approval_id: str) -> AuditRecord:
    [entry] = [e for e in runs.audit() if e.kind == "decided" and e.approval_id == approval_id]
    [asked] = [e for e in runs.audit() if e.kind == "asked" and e.approval_id == approval_id]
    assert asked.nonce and asked.nonce == entry.nonce, "the question and its answer are bound by one nonce"
    return entry


def test_approve_on_the_card_adds_the_book_to_the_cart_exactly_once(
        stack: Stack, shop: ShopServer, model: ScriptedModelServer, panel_runs: PanelRuns) -> None:
    panel_runs.attach(model, timeout=30)
    started = start_from_the_panel(stack, shop)
    driver = started.driver
    card = the_card(driver, started.url)
    assert cart_rows(shop.config.db_path) == [], "nothing runs before the user answers"
    click_card(driver, "approve")

    run = run_ends(driver, card, "finished")
    assert f"Added {CART_PRODUCT} to your cart." in run["answer"]
    product = ShopQueries(shop.config.db_path).product_by_name(CART_PRODUCT)
    assert cart_rows(shop.config.db_path) == [(product.id, 1)]
    assert any("changed the site" in line for line in run["log"]), run["log"]
    # What the run has used of its model so far follows its steps in the panel's log.
    assert any(re.fullmatch(r"used \d+(/\d+)? calls, [\d,]+(/[\d,]+)? tokens, \S+", line) for line in run["log"])
    entry = decided(panel_runs, card.approval_id)
    assert (entry.decision, entry.decided_by) == ("approved", "user (side panel)")
    assert not model.unmatched()


def test_deny_on_the_card_leaves_the_shop_unchanged_and_the_run_log_says_why(
        stack: Stack, shop: ShopServer, model: ScriptedModelServer, panel_runs: PanelRuns) -> None:
    panel_runs.attach(model, timeout=30)
    before = fingerprint(shop.config.db_path)
    started = start_from_the_panel(stack, shop)
    driver = started.driver
    card = the_card(driver, started.url)
    highlighted = shop_tab_shot(started)
    click_card(driver, "deny")

    run = run_ends(driver, card, "failed")
    plain = shop_tab_shot(started)
    assert shop_tab_shot(started) == plain, "screenshots of the unchanged page are stable"
    assert highlighted != plain, "the page showed a highlight while the card was up, and no longer does"
    assert fingerprint(shop.config.db_path) == before and cart_rows(shop.config.db_path) == []
    assert any(line.startswith("not running `click [") and line.endswith("denied by user (side panel)")
               for line in run["log"]), run["log"]
    # Best-first had no other way: it stops and says why.
    assert "not allowed to run `click [" in run["error"]
    assert run["steps"] == 0, "nothing ran in the browser"
    entry = decided(panel_runs, card.approval_id)
    assert (entry.decision, entry.decided_by) == ("denied", "user (side panel)")


def test_no_answer_within_the_timeout_is_a_denial(
        stack: Stack, shop: ShopServer, model: ScriptedModelServer, panel_runs: PanelRuns) -> None:
    panel_runs.attach(model, timeout=3)
    before = fingerprint(shop.config.db_path)
    started = start_from_the_panel(stack, shop)
    driver = started.driver
    card = the_card(driver, started.url)
    shown = time.monotonic()

    run = run_ends(driver, card, "failed")
    assert 2 < time.monotonic() - shown < 10
    assert fingerprint(shop.config.db_path) == before and cart_rows(shop.config.db_path) == []
    assert any("denied by timeout (no answer in the side panel within 3 s)" in line for line in run["log"]), run["log"]
    entry = decided(panel_runs, card.approval_id)
    assert (entry.decision, entry.note) == ("timeout", "no answer in the side panel within 3 s")


def badge(driver: WebDriver) -> str:
    text: str = driver.execute_async_script("chrome.action.getBadgeText({}).then(arguments[arguments.length - 1]);")
    return text


def test_a_question_asked_while_the_panel_is_closed_waits_behind_the_badge(stack: Stack) -> None:
    """Nothing opens a side panel without a user gesture: the action's badge says a card waits, the card shows when the
    panel opens. (A held request's card, as the network gate asks it.)"""
    driver = stack.driver
    for handle in driver.window_handles[1:]:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(driver.window_handles[0])
    driver.get(f"chrome-extension://{EXTENSION_ID}/options.html")  # an extension page, not the panel
    approver = SidePanelApprover(stack.session.hub, ConfirmConfig(timeout_seconds=20))
    message = ConfirmRequest(run_id="r-badge", approval_id="held-1", nonce=new_nonce(), kind="request",
                             url="http://shop.test/checkout", reasons=["a POST that no approval covers"],
                             timeout_s=20, request_method="POST", request_url="http://shop.test/order")
    asked = asyncio.run_coroutine_threadsafe(approver.confirm(message), stack.loop.loop)
    try:
        WebDriverWait(driver, 10).until(lambda d: badge(d) == "!")
        driver.switch_to.new_window("tab")
        driver.get(PANEL)
        card = WebDriverWait(driver, 10).until(lambda d: d.execute_script(CARD_JS))
        assert (card["approval_id"], card["url"], card["reasons"]) == (
            "held-1", "http://shop.test/checkout", ["a POST that no approval covers"])
        assert text_of(driver, "#confirm-card .confirm-request") == "POST http://shop.test/order"
        assert text_of(driver, "#confirm-card h2") == "Let this request through?"
        WebDriverWait(driver, 5).until(lambda d: badge(d) == "", "the panel shows it: the badge is cleared")
        click_card(driver, "approve")
        decision = asked.result(10)
        assert (decision.approved, decision.by) == (True, "user (side panel)")
        WebDriverWait(driver, 5).until(lambda d: d.execute_script(CARD_JS) is None)
    finally:
        asked.cancel()
        approver.close()


def test_a_double_click_on_approve_answers_only_the_card_it_was_meant_for(stack: Stack) -> None:
    """Two questions wait; the user double-clicks Approve on the first. The second card takes its place under the
    pointer, and the double click's second click, landing on it, answers nothing: a new card takes no click for a
    moment (confirmview.js `cardPause`)."""
    driver = stack.driver
    for handle in driver.window_handles[1:]:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(driver.window_handles[0])
    driver.switch_to.new_window("tab")
    driver.get(PANEL)
    approver = SidePanelApprover(stack.session.hub, ConfirmConfig(timeout_seconds=30))
    asked = [asyncio.run_coroutine_threadsafe(approver.confirm(ConfirmRequest(
        run_id="r-double", approval_id=f"held-{i}", nonce=new_nonce(), kind="request",
        url="http://shop.test/checkout", reasons=["a POST that no approval covers"], timeout_s=30,
        request_method="POST", request_url=f"http://shop.test/order/{i}")), stack.loop.loop) for i in (1, 2)]
    approve = "#confirm-card button.approve"
    try:
        WebDriverWait(driver, 10).until(lambda d: (d.execute_script(CARD_JS) or {}).get("approval_id") == "held-1")
        click_card(driver, "approve")
        WebDriverWait(driver, 5, poll_frequency=0.02).until(
            lambda d: (d.execute_script(CARD_JS) or {}).get("approval_id") == "held-2")
        driver.find_element(By.CSS_SELECTOR, approve).click()  # the double click's second click
        if driver.find_element(By.CSS_SELECTOR, approve).is_enabled():
            # The pause ended before the click could be known to land in it (a slow machine): nothing to test.
            pytest.skip("the second click came after the new card's pause")
        first = asked[0].result(10)
        assert (first.approved, first.by) == (True, "user (side panel)")
        time.sleep(1.5)  # past the new card's pause: a click that was taken would have answered by now
        assert not asked[1].done(), "the second click approved the next question unread"
        assert driver.execute_script(CARD_JS)["approval_id"] == "held-2"
        click_card(driver, "deny")
        assert not asked[1].result(10).approved
    finally:
        for question in asked:
            question.cancel()
        approver.close()
