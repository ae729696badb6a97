"""program_html reads pages through the extension (read_page, protocol 7): in a guarded background tab, prep actions
first, the locator's value as text; a throwing locator reads as ""; the server never receives a mutating request an
expression makes; a tab that is not guarded is refused. Real Chromium, the real extension, a recording server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from branchwise.harness.evaluators import EvalTools, RunOutcome, evaluate
from branchwise.harness.reader import BrowserPageReader
from branchwise.harness.sites import SiteUrls
from branchwise.harness.tasks import TaskConfig
from branchwise.link import ExtensionError
from branchwise.sandbox.recording import Recorded, RecordingServer, Reply

from harness import Stack

pytestmark = pytest.mark.e2e

ORDER_PAGE = """<!doctype html><title>Order 1042</title>
<h1>Order #1042 &amp; more</h1>
<p class="status">Pending</p>
<details><summary>Items</summary><ul id="items"></ul></details>
<button id="load" onclick="document.getElementById('items').innerHTML = '<li>Tent</li><li>Stove</li>'">Load</button>
"""


def respond(request: Recorded, port: int) -> Reply | None:
    return Reply(ORDER_PAGE) if request.route == "/orders/1042" else None


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer(respond) as rec:
        yield rec


def read(stack: Stack, url: str, locator: str, prep: list[str] | None = None) -> str:
    reader = BrowserPageReader(stack.session.browser, url)
    value: str = stack.call(reader.read(None, locator, prep or []))
    return value


def test_a_locator_reads_its_value_after_the_prep_actions(stack: Stack, server: RecordingServer) -> None:
    url = f"{server.base_url}/orders/1042"
    assert read(stack, url, "document.querySelector('h1').outerText") == "Order #1042 & more"
    assert read(stack, url, "document.querySelector('#items').outerText") == ""
    items = read(stack, url, "document.querySelector('#items').outerText",
                 ["document.querySelector('details').open = true", "document.querySelector('#load').click()"])
    assert items.split() == ["Tent", "Stove"]
    assert "<h1>Order #1042 &amp; more</h1>" in read(stack, url, "")
    # A locator that throws (the page is not what the task expected) reads as "", as in WebArena.
    assert read(stack, url, "document.querySelector('.missing').outerText") == ""
    # Every read used a throw-away tab: none is left open.
    tabs = stack.call(stack.session.browser.list_tabs())
    assert not any("/orders/1042" in t.url for t in tabs)


def test_an_expression_cannot_change_the_site(stack: Stack, server: RecordingServer) -> None:
    url = f"{server.base_url}/orders/1042"
    post = "fetch('/orders/1042/cancel?who=read', {method: 'POST'}).then(() => 'sent', () => 'blocked')"
    assert read(stack, url, post) == "blocked"
    read(stack, url, "document.title", [post])
    assert server.mutating() == []


def test_a_tab_that_is_not_guarded_is_refused(stack: Stack, server: RecordingServer) -> None:
    browser = stack.session.browser
    tab = stack.call(browser.open_tab(f"{server.base_url}/orders/1042"))
    try:
        with pytest.raises(ExtensionError) as refused:
            stack.call(browser.read_page(tab.tab_id, "document.title"))
        assert refused.value.code == "not_guarded"
    finally:
        stack.call(browser.close_tab(tab.tab_id))


def order_task(prep: list[str]) -> TaskConfig:
    return TaskConfig.model_validate({
        "task_id": 7, "sites": ["shopping"], "start_url": "__SHOPPING__", "intent": "Load the items of order 1042",
        "eval": {"eval_types": ["program_html"], "program_html": [
            {"url": "__SHOPPING__/orders/1042", "locator": "document.querySelector('#items').outerText",
             "prep_actions": prep, "required_contents": {"must_include": ["Tent", "Stove |OR| Lantern"]}},
            {"url": "last", "locator": "document.querySelector('.status').outerText",
             "required_contents": {"exact_match": "pending"}},
        ]}})


def test_a_program_html_task_is_evaluated_through_the_extension(stack: Stack, server: RecordingServer) -> None:
    sites = SiteUrls.parse([f"shopping={server.base_url}"])
    final = f"{server.base_url}/orders/1042"
    tools = EvalTools(sites, reader=BrowserPageReader(stack.session.browser, final))
    prep = ["document.querySelector('details').open = true", "document.querySelector('#load').click()"]
    loaded = stack.call(evaluate(order_task(prep), RunOutcome("", final), tools))
    assert loaded.score == 1.0
    # Without the prep actions the items are never loaded: the first target fails, the score is the product.
    assert stack.call(evaluate(order_task([]), RunOutcome("", final), tools)).score == 0.0
