"""Handed-over tabs only: their requests are streamed, they sit in the "Branchwise" group, other tabs are refused."""

from __future__ import annotations

import time

import pytest

from branchwise.actions import Click
from branchwise.agent.env import BrowserEnv
from branchwise.link import BrowserEvent, ExtensionError
from branchwise.protocol import NetworkRequest
from branchwise.sandbox import ShopQueries, ShopServer
from branchwise.sandbox.landmarks import NOVEL_WITHOUT_REVIEWS

from harness import Stack, in_extension

pytestmark = pytest.mark.e2e


def test_requests_of_handed_over_tabs_are_streamed(stack: Stack, shop: ShopServer) -> None:
    events: list[BrowserEvent] = []
    unsubscribe = stack.session.browser.on_event(events.append)
    try:
        product = ShopQueries(shop.config.db_path).product_by_name(NOVEL_WITHOUT_REVIEWS)  # no options to choose first
        assert product is not None
        tab = stack.call(stack.session.browser.open_tab(f"{shop.base_url}/product/{product.id}"))
        env = BrowserEnv(stack.session.browser, tab.tab_id)
        view = stack.call(env.observe())
        assert view.page is not None
        add = next(e.id for e in view.page.elements.values() if e.role == "button" and e.name == "Add to cart")
        assert stack.call(env.execute(Click(add))).ok
        deadline = time.time() + 5
        while time.time() < deadline and not any(
                isinstance(e, NetworkRequest) and e.method == "POST" for e in events):
            time.sleep(0.05)
    finally:
        unsubscribe()
    requests = [e for e in events if isinstance(e, NetworkRequest) and e.tab_id == tab.tab_id]
    post = [r for r in requests if r.method == "POST"]
    assert len(post) == 1 and post[0].url == f"{shop.base_url}/cart/add"
    assert post[0].resource_type == "main_frame" and post[0].time > 1.6e12
    assert any(r.method == "GET" and r.url.endswith(f"/product/{product.id}") for r in requests)


def test_other_tabs_are_never_read_and_handed_tabs_are_grouped(stack: Stack, shop: ShopServer) -> None:
    handed = stack.call(stack.session.browser.open_tab(shop.base_url + "/"))
    driver = stack.driver
    driver.switch_to.new_window("tab")
    driver.get(shop.base_url + "/cart?private=1")  # the user's own tab, never handed over
    driver.switch_to.window(driver.window_handles[0])

    private_id = in_extension(stack, "async () => (await chrome.tabs.query({url: '*://*/cart?private=1'}))[0].id")
    assert isinstance(private_id, int)
    with pytest.raises(ExtensionError, match=f"tab {private_id} is not handed over"):
        stack.call(stack.session.browser.observe(private_id))
    assert private_id not in {t.tab_id for t in stack.call(stack.session.browser.list_tabs())}

    group = in_extension(stack, f"""async () => {{
        const tab = await chrome.tabs.get({handed.tab_id});
        return tab.groupId >= 0 ? (await chrome.tabGroups.get(tab.groupId)).title : "no group";
    }}""")
    assert group == "Branchwise"
