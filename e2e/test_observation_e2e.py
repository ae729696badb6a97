"""What the model reads, captured through the real extension: the shop home's lines, and secrets kept out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from branchwise.actions import Type
from branchwise.agent.env import BrowserEnv, EnvView
from branchwise.observation import process
from branchwise.observation.coverage import unreached_clickables
from branchwise.sandbox import ShopConfig, ShopQueries, ShopServer
from branchwise.sandbox.forum import ForumConfig, ForumServer
from branchwise.sandbox.landmarks import HEADPHONES
from branchwise.sandbox.tracker import TrackerConfig, TrackerServer

from harness import Stack

pytestmark = pytest.mark.e2e


def observe_url(stack: Stack, url: str) -> tuple[BrowserEnv, EnvView]:
    tab = stack.call(stack.session.browser.open_tab(url))
    env = BrowserEnv(stack.session.browser, tab.tab_id)
    return env, stack.call(env.observe())


def lines_without_ids(text: str) -> list[str]:
    return [re.sub(r"\[\d+\] ", "[#] ", line) for line in text.splitlines()]


def test_shop_home_observation_has_the_expected_lines(stack: Stack, shop: ShopServer) -> None:
    _, view = observe_url(stack, shop.base_url + "/")
    lines = lines_without_ids(view.text)
    assert lines[0].endswith("(current): Home | Branchwise Market")
    assert lines[1] == f"URL: {shop.base_url}/"
    headphones = ShopQueries(shop.config.db_path).product_by_name(HEADPHONES)
    assert headphones is not None
    expected = [
        "[#] RootWebArea 'Home | Branchwise Market'",
        "\t[#] link 'Skip to main content'",
        "\t\t[#] searchbox 'Search products'",
        "\t\t[#] button 'Search'",
        "\t[#] navigation 'Categories'",
        "\t\t[#] link 'Garden'",
        "\t\t\t[#] heading 'Featured products'",
        f"\t\t\t\t\t[#] heading '{HEADPHONES}'",
        f"\t\t\t\t\t\t[#] link '{HEADPHONES}'",
        f"\t\t\t\t\t[#] StaticText '${headphones.price_cents / 100:.2f}'",
    ]
    for line in expected:
        assert line in lines, f"missing {line!r} in:\n{view.text[:3000]}"
    # Ids are the DOM's backend node ids, and each maps back to an element reference.
    assert view.page is not None
    garden = next(e for e in view.page.elements.values() if e.role == "link" and e.name == "Garden")
    assert garden.ref.backend_node_id == garden.id and garden.ref.target is None
    assert view.raw_node_count > len(view.page.elements)


def test_password_and_card_values_never_reach_the_text(stack: Stack, pages_port: int) -> None:
    env, view = observe_url(stack, f"http://127.0.0.1:{pages_port}/payment.html")
    assert view.page is not None
    ids = {e.name: e.id for e in view.page.elements.values() if e.role == "textbox"}
    # Neutral labels and values that no name or Luhn rule would catch: only the DOM (autocomplete cc-*, type=password)
    # tells these apart, in the page and in its iframe.
    secrets = {"Payment reference": "REF-8841-XQ", "Access code": "hunter2-secret",
               "Extra code": "737", "Note for the courier": "leave at the door"}
    for name, value in secrets.items():
        result = stack.call(env.execute(Type(ids[name], value, press_enter=False)))
        assert result.ok, result.error
    text = stack.call(env.observe()).text
    for name in ("Payment reference", "Access code", "Extra code"):
        assert secrets[name] not in text
        assert re.search(rf"textbox '{name}'.*value: ••••", text), text
    assert "value: 'leave at the door'" in text


def start_site(site: str, db: Path) -> ShopServer | ForumServer | TrackerServer:
    match site:
        case "forum":
            return ForumServer(ForumConfig(db_path=db)).start()
        case "tracker":
            return TrackerServer(TrackerConfig(db_path=db)).start()
    return ShopServer(ShopConfig(db_path=db)).start()


@pytest.mark.parametrize("site", ["shop", "forum", "tracker"])
def test_every_element_the_dom_marks_clickable_can_be_acted_on(stack: Stack, tmp_path: Path, site: str) -> None:
    """On each sandbox site's home page and the first pages it links to (lists, details, forms): every element with a
    click listener or a link has a line of its own, or something to act on inside it has one."""
    server = start_site(site, tmp_path / f"{site}.sqlite3")
    try:
        _, home = observe_url(stack, server.base_url + "/")
        assert home.page is not None
        links = [e.props.get("url", "") for e in home.page.elements.values() if e.role == "link"]
        pages = [u for u in dict.fromkeys(links) if u.startswith(server.base_url) and u != server.base_url + "/"][:4]
        assert len(pages) == 4, links
        checked = 0
        for url in [server.base_url + "/", *pages]:
            env, view = observe_url(stack, url)
            observation = stack.call(env.browser.observe(env.tab_id))
            assert view.page is not None
            checked += sum(len(f.clickable_node_ids) for f in observation.frames)
            assert unreached_clickables(observation, process(observation)) == [], url
        # The check saw the pages' links and listeners (an empty list would pass it vacuously).
        assert checked > 50
    finally:
        server.stop()
