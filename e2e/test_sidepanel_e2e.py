"""The side panel, as a user uses it: connection status, a task typed in, the run's steps live, the answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from branchwise.agent.env import BrowserEnv, EnvConfig
from branchwise.bench.faults import added_to_cart, cart_script
from branchwise.bench.scenarios import CART_PRODUCT, CART_TASK
from branchwise.config import EXTENSION_ID
from branchwise.demo.task import DEMO_TASK
from branchwise.llm import LLMClient, LLMConfig
from branchwise.models import ModelSetup, bundled_demo_script
from branchwise.runs import RunManager
from branchwise.sandbox import ShopQueries, ShopServer
from branchwise.scripted_model import ScriptedModelServer
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.roles import ModelRoles
from branchwise.store import DemonstrationRecord, DemoStep, NodeRecord, RunRecord, RunStore

from harness import Stack

pytestmark = pytest.mark.e2e
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel.html"


@pytest.fixture
def runs(stack: Stack) -> Iterator[ScriptedModelServer]:
    """The backend accepts runs from the panel, answered by a scripted model over real HTTP."""
    with ScriptedModelServer(bundled_demo_script()) as server:
        async def attach() -> LLMClient:
            client = LLMClient(LLMConfig(base_url=server.base_url, api_key=SecretStr("test"), model="scripted"))
            agent = SearchAgent(ModelRoles.shared(client), stack.session.browser,
                                SearchConfig(strategy="greedy", max_steps=10))
            RunManager(stack.session.browser, ModelSetup(client, True, "scripted"), agent, EnvConfig(),
                       lambda point: agent).attach()
            return client

        client = stack.call(attach())
        yield server
        stack.call(client.aclose())
        stack.session.hub.start_run_handler = None


def text_of(driver: WebDriver, css: str) -> str:
    """The first match's text, read in one script: the panel draws its runs again on every update, and an element
    found in one call may be gone by the next."""
    return str(driver.execute_script("return document.querySelector(arguments[0])?.innerText ?? '';", css))


def panel_beside(stack: Stack, url: str) -> WebDriver:
    """The user's tab at `url` (not handed over yet), then the panel in a tab of its own, connected."""
    driver = stack.driver
    driver.switch_to.new_window("tab")
    driver.get(url)
    driver.switch_to.new_window("tab")
    driver.get(PANEL)
    WebDriverWait(driver, 15).until(lambda d: text_of(d, "#status") == "Connected to the backend")
    return driver


def test_panel_shows_the_connection(stack: Stack) -> None:
    driver = stack.driver
    driver.switch_to.new_window("tab")
    driver.get(PANEL)
    WebDriverWait(driver, 15).until(lambda d: text_of(d, "#status") == "Connected to the backend")
    assert driver.find_element(By.ID, "start").is_enabled()


def test_task_box_starts_a_run_on_the_current_tab_and_shows_it_live(stack: Stack, shop: ShopServer,
                                                                    runs: ScriptedModelServer) -> None:
    driver = stack.driver
    driver.switch_to.new_window("tab")
    driver.get(shop.base_url + "/")  # the user's tab: not handed over yet
    driver.switch_to.new_window("tab")
    driver.get(PANEL)
    WebDriverWait(driver, 15).until(lambda d: text_of(d, "#status") == "Connected to the backend")
    driver.find_element(By.ID, "task").send_keys(DEMO_TASK)
    driver.find_element(By.ID, "start").click()

    cheapest = ShopQueries(shop.config.db_path).cheapest_in_category("garden")
    expected = f"${cheapest.price_cents / 100:.2f}"
    WebDriverWait(driver, 60).until(lambda d: expected in text_of(d, ".run .answer"))
    run = driver.find_element(By.CSS_SELECTOR, ".run")
    assert DEMO_TASK in run.text
    assert run.find_element(By.CSS_SELECTOR, ".badge.finished").text == "finished"
    assert "scripted model" in run.text
    steps = [li.find_element(By.CSS_SELECTOR, ".action").text for li in run.find_elements(By.CSS_SELECTOR, "li.step")]
    assert [s.split(" ")[0] for s in steps] == ["click", "select_option", "click", "stop"]
    assert driver.find_element(By.ID, "start").is_enabled(), "a new run can start once this one is over"

    handed = stack.call(stack.session.browser.list_tabs())
    assert any(t.url.startswith(shop.base_url + "/category/garden") for t in handed), "the user's tab was handed over"


def test_panel_reports_a_refused_run(stack: Stack, shop: ShopServer) -> None:
    async def refuse(_: object) -> str:
        raise RuntimeError("No model is configured.")

    stack.session.hub.start_run_handler = refuse
    try:
        driver = panel_beside(stack, shop.base_url + "/")
        driver.find_element(By.ID, "task").send_keys("anything")
        driver.find_element(By.ID, "start").click()
        WebDriverWait(driver, 15).until(lambda d: "No model is configured" in text_of(d, "#problem"))
    finally:
        stack.session.hub.start_run_handler = None


def test_a_run_a_crash_cut_short_is_offered_on_reconnect_and_resumed_from_the_panel(
        stack: Stack, shop: ShopServer, store: RunStore) -> None:
    browser = stack.session.browser
    product = ShopQueries(shop.config.db_path).product_by_name(CART_PRODUCT)
    tab = stack.call(browser.open_tab(f"{shop.base_url}/product/{product.id}"))
    page = stack.call(BrowserEnv(browser, tab.tab_id).observe())
    # What a backend killed while the model thought leaves: the run, its first page, where it was; marked interrupted
    # by the next backend's start.
    store.start_run(RunRecord(run_id="c1", task=CART_TASK, strategy="greedy", tab_id=tab.tab_id))
    store.upsert_node(NodeRecord(run_id="c1", node_id=0, url=page.url, title=page.title, observation_text=page.text,
                                 status="expanded"))
    store.set_position("c1", tab.tab_id, 0)
    store.finish_run("c1", "interrupted", reason="the backend stopped before the run finished")
    with ScriptedModelServer(cart_script()) as model:
        client = LLMClient(LLMConfig(base_url=model.base_url, api_key=SecretStr("test"), model="scripted"))
        agent = SearchAgent(ModelRoles.shared(client), browser, SearchConfig(strategy="greedy", max_steps=5),
                            store=store)
        manager = RunManager(browser, ModelSetup(client, True, "scripted"), agent, EnvConfig(), lambda point: agent,
                             store=store)
        manager.attach()
        try:
            driver = stack.driver
            driver.switch_to.new_window("tab")
            driver.get(PANEL)
            WebDriverWait(driver, 15).until(lambda d: text_of(d, "#status") == "Connected to the backend")
            # To the extension, a backend restart is its connection dropping and a new one proving itself.
            link = stack.session.hub.link
            assert link is not None
            stack.call(link.close(1012, "backend restart"))
            WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".run button.resume"))
            offered = driver.find_element(By.CSS_SELECTOR, ".run")
            assert CART_TASK in offered.text and "interrupted" in offered.text
            assert "it can go on in the tab it worked in" in offered.text
            WebDriverWait(driver, 15).until(
                lambda d: d.find_element(By.CSS_SELECTOR, ".run button.resume").is_enabled())
            driver.find_element(By.CSS_SELECTOR, ".run button.resume").click()
            WebDriverWait(driver, 60).until(lambda d: "Added" in text_of(d, ".run .answer"))
            run = driver.find_element(By.CSS_SELECTOR, ".run")
            assert run.find_element(By.CSS_SELECTOR, ".badge.finished").text == "finished"
            assert not run.find_elements(By.CSS_SELECTOR, "button.resume"), "the offer ends once the run goes on"
            assert "Cut short by a backend exit" not in run.text
        finally:
            manager.detach()
            stack.call(client.aclose())
    assert added_to_cart(shop.config.db_path, product.id) == 1
    resumed = store.load_run("c1")
    assert resumed.run.status == "finished" and resumed.nodes[0].observation_text == page.text


def test_the_panel_lists_what_exploring_learnt_about_the_tabs_site_and_not_another_sites(
        stack: Stack, shop: ShopServer, tmp_path: Path) -> None:
    site = shop.base_url.split("://", 1)[1]
    with RunStore(tmp_path / "runs.sqlite3") as store:
        steps = [DemoStep(url=shop.base_url + "/", action_text="click [1]"),
                 DemoStep(url=shop.base_url + "/category/garden", action_text="stop [done]")]
        store.add_demonstration(DemonstrationRecord(site=site, instruction="Open the Garden category", steps=steps,
                                                    score=5))
        store.add_demonstration(DemonstrationRecord(site="forum.example", instruction="Read the newest post",
                                                    steps=steps, score=4))
        with ScriptedModelServer(bundled_demo_script()) as server:
            async def attach() -> tuple[LLMClient, RunManager]:
                client = LLMClient(LLMConfig(base_url=server.base_url, api_key=SecretStr("test"), model="scripted"))
                agent = SearchAgent(ModelRoles.shared(client), stack.session.browser)
                manager = RunManager(stack.session.browser, ModelSetup(client, True, "scripted"), agent, EnvConfig(),
                                     lambda point: agent, store=store)
                manager.attach()
                return client, manager

            client, manager = stack.call(attach())
            try:
                driver = panel_beside(stack, shop.base_url + "/")
                # Read in one script: the list is drawn again whenever the connection or the tab changes.
                shown = WebDriverWait(driver, 15).until(lambda d: d.execute_script(
                    "const s = document.getElementById('learnt');"
                    "const items = [...document.querySelectorAll('#demos li.demo')];"
                    "return items.length ? {site: s.dataset.site, text: s.innerText,"
                    " listed: items.map((li) => li.querySelector('.instruction').textContent)} : null;"))
                assert shown["site"] == site
                assert shown["listed"] == ["Open the Garden category"]
                assert "Learnt about this site" in shown["text"] and "2 steps, score 5/5" in shown["text"]
            finally:
                manager.detach()
                stack.call(client.aclose())
