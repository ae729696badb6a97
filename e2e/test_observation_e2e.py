"""What the model reads, captured through the real extension: the shop home's lines, and secrets kept out."""

from __future__ import annotations

import re

import pytest

from branchwise.actions import Type
from branchwise.agent.env import BrowserEnv, EnvView
from branchwise.sandbox import ShopQueries, ShopServer
from branchwise.sandbox.landmarks import HEADPHONES

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
