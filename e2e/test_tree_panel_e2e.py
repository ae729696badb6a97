"""The side panel draws a run's search tree from the backend's tree_update messages, as it grows."""

from __future__ import annotations

import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from branchwise.config import EXTENSION_ID
from branchwise.protocol import BacktrackView, Envelope, FrontierItemView, RunUpdate, TreeNodeView, TreeUpdate

from harness import Stack

pytestmark = pytest.mark.e2e
PANEL = f"chrome-extension://{EXTENSION_ID}/sidepanel.html"


def send(stack: Stack, message: Envelope) -> None:
    async def go() -> None:
        link = await stack.session.browser.connected()
        await link.send(message)

    stack.call(go())


NODES = [
    TreeNodeView(id=0, parent=None, url="http://shop.test/", value=0.5, status="expanded", checkpoint=True),
    TreeNodeView(id=1, parent=0, action="click [12] Garden", url="http://shop.test/garden", value=0.72, reward=0.1,
                 action_class="safe", status="expanded", checkpoint=True),
    TreeNodeView(id=2, parent=0, action="click [7] Delete account", value=-1.0, reward=-1.0,
                 action_class="destructive", status="dead", note="failed: the button is disabled"),
    TreeNodeView(id=3, parent=1, action="select_option [30] [Price: low to high]", value=0.81, reward=0.2,
                 action_class="safe", status="open"),
    TreeNodeView(id=4, parent=1, action="type [5] [gnome] and press Enter to search the whole catalogue", value=0.3,
                 reward=0.0, action_class="safe", status="invalid"),
    TreeNodeView(id=5, parent=3, action="stop [$4.99]", value=0.95, reward=1.0, action_class="terminating",
                 status="terminal"),
]
FRONTIER = [
    FrontierItemView(node=1, action="click [14] Tools", action_class="safe", reward=0.05),
    FrontierItemView(node=3, action="click [40] Add to cart", action_class="destructive", reward=0.4),
]
BACKTRACKS = [
    BacktrackView(source=2, target=0, mode="speculative", outcome="aborted", reason="the replay saw a different page"),
    BacktrackView(source=4, target=1, mode="naive", outcome="committed"),
]


def node(run: WebElement, node_id: int) -> WebElement:
    return run.find_element(By.CSS_SELECTOR, f"li.node[data-node-id='{node_id}']")


def row_text(item: WebElement) -> str:
    return item.find_element(By.CSS_SELECTOR, ":scope > .node-row").text


def run_box(driver: WebDriver, run_id: str) -> WebElement:
    """The run's box as drawn now: the panel redraws its runs on every update, so never keep one across updates."""
    return driver.find_element(By.CSS_SELECTOR, f".run[data-run-id='{run_id}']")


def node_count(driver: WebDriver, run_id: str) -> int:
    return len(driver.find_elements(By.CSS_SELECTOR, f".run[data-run-id='{run_id}'] li.node"))


def open_panel(driver: WebDriver, run_id: str) -> WebElement:
    driver.switch_to.window(driver.window_handles[0])
    driver.switch_to.new_window("tab")
    driver.get(PANEL)
    selector = f".run[data-run-id='{run_id}'] .tree li.node"
    WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.CSS_SELECTOR, selector))
    return driver.find_element(By.CSS_SELECTOR, f".run[data-run-id='{run_id}']")


def test_panel_draws_the_search_tree_as_it_grows(stack: Stack) -> None:
    run_id = f"tree-{uuid.uuid4().hex[:6]}"
    driver = stack.driver
    send(stack, RunUpdate(run_id=run_id, task="Find the cheapest garden gnome", status="started"))
    send(stack, TreeUpdate(run_id=run_id, strategy="best_first", nodes=NODES[:3], current=1))
    run = open_panel(driver, run_id)
    assert len(run.find_elements(By.CSS_SELECTOR, "li.node")) == 3

    # It grows while the panel is open.
    send(stack, TreeUpdate(run_id=run_id, strategy="best_first", nodes=NODES, current=3, frontier=FRONTIER,
                           backtracks=BACKTRACKS))
    WebDriverWait(driver, 10).until(lambda d: node_count(d, run_id) == 6)
    run = run_box(driver, run_id)
    tree = run.find_element(By.CSS_SELECTOR, ".tree")
    assert tree.get_attribute("data-strategy") == "best_first"
    assert "best_first · 6 nodes" in tree.text

    # Nesting: children sit in their parent's list.
    roots = tree.find_elements(By.CSS_SELECTOR, ".tree > ul.tree-nodes > li")
    assert [li.get_attribute("data-node-id") for li in roots] == ["0"]
    nested = node(run, 0).find_elements(By.CSS_SELECTOR, ":scope > ul.tree-nodes > li")
    assert [li.get_attribute("data-node-id") for li in nested] == ["1", "2"]
    assert node(node(node(run, 0), 1), 3).find_element(By.CSS_SELECTOR, "li[data-node-id='5']")

    # The current node, values and rewards to 2 decimals, class badges, status, checkpoints.
    assert [li.get_attribute("data-node-id") for li in run.find_elements(By.CSS_SELECTOR, "li.node.current")] == ["3"]
    three = row_text(node(run, 3))
    assert "select_option [30] [Price: low to high]" in three and "v 0.81" in three and "r 0.20" in three
    assert node(run, 3).find_element(By.CSS_SELECTOR, ".node-row .badge.class-safe").text == "safe"
    assert node(run, 2).find_element(By.CSS_SELECTOR, ".node-row .badge.class-destructive").text == "destructive"
    assert node(run, 5).find_element(By.CSS_SELECTOR, ".node-row .badge.class-terminating").text == "terminating"
    assert "v -1.00" in row_text(node(run, 2)) and "dead" in row_text(node(run, 2))
    assert "start" in row_text(node(run, 0)) and "v 0.50" in row_text(node(run, 0))
    assert "r " not in row_text(node(run, 0)), "a node without a reward shows none"
    assert {li.get_attribute("data-node-id") for li in run.find_elements(By.CSS_SELECTOR, "li.node")
            if li.find_elements(By.CSS_SELECTOR, ":scope > .node-row .checkpoint")} == {"0", "1"}
    assert "status-dead" in (node(run, 2).get_attribute("class") or "")
    status = node(run, 2).find_element(By.CSS_SELECTOR, ":scope > .node-row .node-status")
    assert status.get_attribute("title") == "failed: the button is disabled", "a dead node says why on hover"
    assert not node(run, 4).find_element(By.CSS_SELECTOR, ":scope > .node-row .node-status").get_attribute("title")
    assert node(run, 4).get_attribute("data-status") == "invalid"
    grey = driver.execute_script(
        "return getComputedStyle(arguments[0]).color", node(run, 2).find_element(By.CSS_SELECTOR, ".node-row"))
    normal = driver.execute_script(
        "return getComputedStyle(arguments[0]).color", node(run, 3).find_element(By.CSS_SELECTOR, ".node-row"))
    assert grey != normal, "dead nodes are greyed"

    # The frontier and the backtracks.
    frontier = run.find_elements(By.CSS_SELECTOR, "ol.frontier li.frontier-item")
    assert [f.get_attribute("data-node-id") for f in frontier] == ["1", "3"]
    assert "click [40] Add to cart" in frontier[1].text and "r 0.40" in frontier[1].text
    assert frontier[1].find_element(By.CSS_SELECTOR, ".badge.class-destructive")
    aborted = run.find_element(By.CSS_SELECTOR, "li.backtrack[data-outcome='aborted']")
    assert "#2 → #0" in aborted.text and "the replay saw a different page" in aborted.text
    assert aborted.get_attribute("data-mode") == "speculative"
    committed = run.find_element(By.CSS_SELECTOR, "li.backtrack[data-outcome='committed']")
    assert "#4 → #1" in committed.text and "naive" in committed.text
    assert not run.find_elements(By.CSS_SELECTOR, ".on-trajectory, .trajectory")

    # Legible in a narrow side panel: nothing overflows sideways at 320 px.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 320, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    try:
        assert driver.execute_script(
            "return document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        action = node(run, 4).find_element(By.CSS_SELECTOR, ".action")
        font = driver.execute_script("return parseFloat(getComputedStyle(arguments[0]).fontSize)", action)
        assert font >= 11
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    # The run ends with a chosen path: its nodes are marked.
    send(stack, TreeUpdate(run_id=run_id, strategy="best_first", nodes=NODES, current=5, frontier=FRONTIER[:1],
                           backtracks=BACKTRACKS, trajectory=[0, 1, 3, 5]))
    send(stack, RunUpdate(run_id=run_id, status="finished", answer="$4.99"))
    WebDriverWait(driver, 10).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f".run[data-run-id='{run_id}'] .badge.finished")
        and d.find_elements(By.CSS_SELECTOR, f".run[data-run-id='{run_id}'] .trajectory"))
    run = run_box(driver, run_id)
    marked = [li.get_attribute("data-node-id") for li in run.find_elements(By.CSS_SELECTOR, "li.node.on-trajectory")]
    assert marked == ["0", "1", "3", "5"]
    assert run.find_element(By.CSS_SELECTOR, ".trajectory").get_attribute("data-trajectory") == "0 1 3 5"
    assert "#0 → #1 → #3 → #5" in run.find_element(By.CSS_SELECTOR, ".trajectory").text
    assert [li.get_attribute("data-node-id") for li in run.find_elements(By.CSS_SELECTOR, "li.node.current")] == ["5"]
    assert len(run.find_elements(By.CSS_SELECTOR, "li.frontier-item")) == 1
    assert run.find_element(By.CSS_SELECTOR, ".badge.finished").text == "finished"
    assert "Find the cheapest garden gnome" in run.text and "$4.99" in run.text


def test_a_tree_for_an_unknown_run_still_shows(stack: Stack) -> None:
    """The tree may arrive before (or without) any run_update: the run is created for it."""
    run_id = f"tree-{uuid.uuid4().hex[:6]}"
    send(stack, TreeUpdate(run_id=run_id, strategy="mcts", nodes=NODES[:2], current=0))
    run = open_panel(stack.driver, run_id)
    assert [li.get_attribute("data-node-id") for li in run.find_elements(By.CSS_SELECTOR, "li.node")] == ["0", "1"]
    assert run.find_element(By.CSS_SELECTOR, ".tree").get_attribute("data-strategy") == "mcts"
