"""The "Deals of the moment" page: different on every load, the same sequence from a fresh server, read-only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import lxml.html
import pytest

from branchwise.sandbox import DEALS_PATH, ShopConfig, ShopQueries, ShopServer
from branchwise.sandbox.database import fingerprint
from branchwise.sandbox.deals import DEALS_HEADING, FEATURED_DEAL_PREFIX, MORE_DEALS_COUNT, deal_order, deal_window
from branchwise.sandbox.pricing import format_price

from test_sandbox_shop import Browser, Page

FEATURED = "//section[@aria-labelledby='featured-deal-title']"
MORE = "//section[@aria-labelledby='more-deals-title']//ul[contains(@class, 'product-grid')]/li"


@dataclass(frozen=True)
class Deal:
    name: str
    href: str
    price: str


@contextmanager
def running_shop(db_path: Path) -> Iterator[ShopServer]:
    with ShopServer(ShopConfig(db_path=db_path)) as server:
        yield server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShopServer]:
    with running_shop(tmp_path_factory.mktemp("deals") / "shop.sqlite3") as shop:
        yield shop


def _text(node: lxml.html.HtmlElement) -> str:
    return " ".join(node.text_content().split())


def featured_deal(page: Page) -> Deal:
    [link] = page.doc.xpath(f"{FEATURED}//a[starts-with(normalize-space(), '{FEATURED_DEAL_PREFIX.strip()}')]")
    text = _text(link)
    assert text.startswith(FEATURED_DEAL_PREFIX)
    [price] = page.doc.xpath(f"{FEATURED}//p[contains(@class, 'price')]")
    return Deal(text.removeprefix(FEATURED_DEAL_PREFIX), link.get("href"), _text(price))


def more_deals(page: Page) -> list[Deal]:
    deals = []
    for card in page.doc.xpath(MORE):
        [link] = card.xpath(".//a")
        [price] = card.xpath(".//p[@class='price']")
        deals.append(Deal(_text(link), link.get("href"), _text(price)))
    return deals


def test_consecutive_loads_show_different_deals(server: ShopServer) -> None:
    browser = Browser(server.base_url)
    pages = [browser.get(DEALS_PATH) for _ in range(4)]
    assert all(page.status == 200 for page in pages)
    featured = [featured_deal(page) for page in pages]
    for before, after in pairwise(featured):
        assert before != after
    for page, deal in zip(pages, featured, strict=True):
        others = more_deals(page)
        assert len(others) == MORE_DEALS_COUNT
        assert len({d.href for d in [deal, *others]}) == 1 + MORE_DEALS_COUNT


def test_a_fresh_server_shows_the_same_sequence(tmp_path: Path) -> None:
    sequences = []
    for name in ("a", "b"):
        with running_shop(tmp_path / f"{name}.sqlite3") as shop:
            browser = Browser(shop.base_url)
            sequences.append([featured_deal(browser.get(DEALS_PATH)) for _ in range(3)])
    assert sequences[0] == sequences[1]
    assert len(set(sequences[0])) == 3


def test_deals_link_to_real_products_at_their_prices(server: ShopServer) -> None:
    browser = Browser(server.base_url)
    queries = ShopQueries(server.config.db_path)
    page = browser.get(DEALS_PATH)
    for deal in [featured_deal(page), *more_deals(page)]:
        product = queries.product_by_name(deal.name)
        assert product.stock > 0
        assert deal.href == f"/product/{product.id}"
        assert deal.price == format_price(product.price_cents)
        product_page = browser.get(deal.href)
        assert product_page.texts("//h1") == [product.name]
        assert product_page.texts("//p[contains(@class, 'price-large')]") == [deal.price]


def test_deals_page_has_the_site_layout_but_no_link_to_it(server: ShopServer) -> None:
    browser = Browser(server.base_url)
    page = browser.get(DEALS_PATH)
    doc = page.doc
    assert doc.xpath("//title/text()") == [f"{DEALS_HEADING} | {server.config.store_name}"]
    assert page.texts("//h1") == [DEALS_HEADING]
    for landmark in ("header", "main", "footer"):
        assert len(doc.xpath(f"//{landmark}")) == 1, landmark
    assert "Garden" in page.texts("//nav[@aria-label='Categories']//a")
    # Only the page's own breadcrumb points here: not the header, footer or home page.
    assert doc.xpath(f"//a[@href='{DEALS_PATH}']/ancestor::nav/@aria-label") == ["Breadcrumb"]
    assert not browser.get("/").doc.xpath(f"//a[@href='{DEALS_PATH}']")


def test_viewing_deals_never_writes(server: ShopServer) -> None:
    browser = Browser(server.base_url)
    before = fingerprint(server.config.db_path)
    for _ in range(5):
        assert browser.get(DEALS_PATH).status == 200
    assert fingerprint(server.config.db_path) == before
    assert not list(browser.jar), "browsing deals must not start a session"


def test_rotation_skips_sold_out_products_and_always_moves_on() -> None:
    stock = {pid: 5 for pid in range(1, 31)}
    order = deal_order(stock, seed=7)
    assert sorted(order) == sorted(stock) and order == deal_order(stock, seed=7)
    sold_out = order[2]
    without = deal_order({**stock, sold_out: 0}, seed=7)
    assert without == tuple(pid for pid in order if pid != sold_out)

    for size in (1, 2, 3, 4, 5, 8, 30):
        windows = [deal_window(order[:size], load) for load in range(10)]
        assert all(len(w) == min(size, 1 + MORE_DEALS_COUNT) for w in windows)
        if size > 1:
            assert all(a[0] != b[0] for a, b in pairwise(windows)), size
    assert deal_window((), 3) == ()
