"""The sandbox shop over real HTTP: a real uvicorn server, urllib with a cookie jar, facts read back from SQLite."""

from __future__ import annotations

import http.cookiejar
import math
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from pathlib import Path

import lxml.html
import pytest

from branchwise.sandbox import DEMO_USER, OTHER_USER, SESSION_COOKIE, ShopConfig, ShopQueries, ShopServer, landmarks
from branchwise.sandbox.database import fingerprint
from branchwise.sandbox.models import Product
from branchwise.sandbox.pricing import format_price
from branchwise.sandbox.seeding import create_shop_database

FIXED_NOW = datetime(2025, 6, 15, 12, 0)
PAGE_SIZE = 12
VALID_CHECKOUT = {
    "full_name": "Ada Guest",
    "email": "ada.guest@example.com",
    "address": "1 Harbour Road",
    "city": "Springfield",
    "zip_code": "12345",
    "country": "US",
    "shipping_method": "standard",
    "card_number": "4242 4242 4242 4242",
    "card_expiry": "08/27",
    "card_cvc": "123",
}


@dataclass(frozen=True)
class Page:
    status: int
    url: str
    html: str
    headers: Message

    @property
    def doc(self) -> lxml.html.HtmlElement:
        return lxml.html.fromstring(self.html)

    def texts(self, xpath: str) -> list[str]:
        return [" ".join(node.text_content().split()) for node in self.doc.xpath(xpath)]

    def text(self) -> str:
        return " ".join(self.doc.text_content().split())


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class Browser:
    """One visitor: its own cookie jar, so carts and sign-ins never leak between tests."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.jar = http.cookiejar.CookieJar()
        cookies = urllib.request.HTTPCookieProcessor(self.jar)
        no_proxy = urllib.request.ProxyHandler({})
        self._follow = urllib.request.build_opener(cookies, no_proxy)
        self._stay = urllib.request.build_opener(cookies, no_proxy, _NoRedirect())

    def get(self, path: str, follow: bool = True) -> Page:
        return self._open(urllib.request.Request(self.base_url + path), follow)

    def post(self, path: str, fields: dict[str, str], follow: bool = True) -> Page:
        body = urllib.parse.urlencode(fields).encode()
        return self._open(urllib.request.Request(self.base_url + path, data=body, method="POST"), follow)

    def _open(self, request: urllib.request.Request, follow: bool) -> Page:
        opener = self._follow if follow else self._stay
        try:
            with opener.open(request, timeout=10) as response:
                return Page(response.status, response.url, response.read().decode(), response.headers)
        except urllib.error.HTTPError as error:
            return Page(error.code, error.url, error.read().decode(), error.headers)

    @property
    def session_token(self) -> str:
        value = next(cookie.value for cookie in self.jar if cookie.name == SESSION_COOKIE)
        assert value is not None, "the session cookie has no value"
        return value

    def add_to_cart(self, product: Product, quantity: int = 1) -> Page:
        fields = {"product_id": str(product.id), "quantity": str(quantity)}
        if product.sizes:
            fields["size"] = product.sizes[0]
        if product.colors:
            fields["color"] = product.colors[-1]
        return self.post("/cart/add", fields)

    def sign_in(self, email: str, password: str, next_path: str = "/account") -> Page:
        return self.post("/login", {"email": email, "password": password, "next": next_path})


@dataclass(frozen=True)
class Shop:
    base_url: str
    db_path: Path
    queries: ShopQueries

    def browser(self) -> Browser:
        return Browser(self.base_url)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    config = ShopConfig(db_path=tmp_path_factory.mktemp("shop") / "shop.sqlite3", page_size=PAGE_SIZE)
    with ShopServer(config, clock=lambda: FIXED_NOW) as server:
        yield Shop(server.base_url, config.db_path, ShopQueries(config.db_path))


def product_names(page: Page) -> list[str]:
    return page.texts("//ul[contains(@class, 'product-grid')]//*[contains(@class, 'product-card-title')]")


# Seeding


def test_same_seed_gives_identical_databases_and_a_full_catalog(tmp_path: Path) -> None:
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        create_shop_database(tmp_path / f"{name}.sqlite3", seed)
    assert fingerprint(tmp_path / "a.sqlite3") == fingerprint(tmp_path / "b.sqlite3")
    assert fingerprint(tmp_path / "a.sqlite3") != fingerprint(tmp_path / "c.sqlite3")

    queries = ShopQueries(tmp_path / "a.sqlite3")
    assert queries.product_count() >= 200
    categories = queries.categories()
    assert len(categories) == 8
    for category in categories:
        assert len(queries.products_in_category(category.slug)) >= 20
    for landmark in landmarks.LANDMARKS:
        product = queries.product_by_name(landmark.name)
        assert queries.review_count(product.id) == landmark.review_count
    assert queries.product_with_review_count(0) == queries.product_by_name(landmarks.NOVEL_WITHOUT_REVIEWS)
    assert queries.product_by_name(landmarks.SOLD_OUT_BOTTLE).stock == 0
    assert len(queries.orders_for(DEMO_USER.email)) == 3


# Browsing


def test_pages_are_semantic_and_every_control_is_labelled(shop: Shop) -> None:
    tshirt = shop.queries.product_by_name(landmarks.TSHIRT)
    browser = shop.browser()
    browser.add_to_cart(tshirt)
    for path in ("/", "/search?q=lamp", "/category/books", f"/product/{tshirt.id}", "/cart", "/checkout", "/login",
                 "/deals"):
        page = browser.get(path)
        assert page.status == 200, path
        doc = page.doc
        assert doc.xpath("/html/@lang") == ["en"]
        for landmark in ("header", "main", "footer"):
            assert len(doc.xpath(f"//{landmark}")) == 1, (path, landmark)
        assert doc.xpath("//nav[@aria-label='Categories']"), path
        assert len(doc.xpath("//h1")) == 1, path
        labelled = set(doc.xpath("//label/@for"))
        for control in doc.xpath("//input[not(@type='hidden')] | //select"):
            assert control.get("id") in labelled or control.get("aria-label"), (path, lxml.html.tostring(control))
        for form in doc.xpath("//form"):
            assert form.xpath(".//button"), (path, "form without a real button")
            if form.get("method") == "get":
                assert form.get("action") in ("/search", "/category/books"), path


def test_get_requests_never_change_the_database(shop: Shop) -> None:
    product = shop.queries.product_by_name(landmarks.HEADPHONES)
    browser = shop.browser()
    before = fingerprint(shop.db_path)
    for path in ("/", "/search?q=mug", "/category/garden?sort=rating&page=2", f"/product/{product.id}", "/cart",
                 "/checkout", "/orders", "/account", "/login", "/deals", "/no-such-page"):
        browser.get(path)
    assert fingerprint(shop.db_path) == before
    assert not list(browser.jar), "browsing alone must not start a session"


def test_search_finds_products_by_name_and_description(shop: Shop) -> None:
    browser = shop.browser()
    expected = shop.queries.products_matching("backpack")
    assert expected
    page = browser.get("/search?q=BACKPACK")
    assert page.status == 200
    assert page.texts("//h1") == ["Search results for “BACKPACK”"]
    assert sorted(product_names(page)) == sorted(p.name for p in expected)[:PAGE_SIZE]

    # Words from the description count too, and every word must match.
    phrase_matches = shop.queries.products_matching("organic cotton")
    assert phrase_matches
    page = browser.get("/search?" + urllib.parse.urlencode({"q": "organic cotton", "sort": "price-asc"}))
    cheapest_first = sorted(phrase_matches, key=lambda p: (p.price_cents, p.name.lower(), p.id))
    assert product_names(page) == [p.name for p in cheapest_first][:PAGE_SIZE]
    assert f"of {len(phrase_matches)} result" in page.text()


def test_search_without_results_offers_help(shop: Shop) -> None:
    page = shop.browser().get("/search?q=zebra+submarine")
    assert page.status == 200
    assert page.texts("//h1") == ["No results for “zebra submarine”"]
    assert "Check the spelling" in page.text()
    category_links = page.doc.xpath("//main//a[starts-with(@href, '/category/')]/@href")
    assert len(category_links) == len(shop.queries.categories())


def test_category_sorting_and_paging(shop: Shop) -> None:
    browser = shop.browser()
    expected = shop.queries.products_in_category("clothing")
    page_count = math.ceil(len(expected) / PAGE_SIZE)
    assert page_count >= 2

    seen: list[str] = []
    page = browser.get("/category/clothing?sort=price-asc")
    for number in range(1, page_count + 1):
        assert page.texts("//nav[@aria-label='Pagination']//a[@aria-current='page']") == [f"Page {number}"]
        seen += product_names(page)
        prices = page.texts("//ul[contains(@class, 'product-grid')]//p[@class='price']")
        assert prices == [format_price(p.price_cents) for p in expected[len(seen) - len(prices):len(seen)]]
        next_links = page.doc.xpath("//nav[@aria-label='Pagination']//a[@rel='next']/@href")
        if number < page_count:
            page = browser.get(next_links[0])
        else:
            assert not next_links
    assert seen == [p.name for p in expected]

    # The last page links back, and numbered links reach every page.
    assert page.doc.xpath("//nav[@aria-label='Pagination']//a[@rel='prev']/@href") == [
        f"/category/clothing?sort=price-asc&page={page_count - 1}"
    ]
    assert len(page.doc.xpath("//nav[@aria-label='Pagination']//a[not(@rel)]")) == page_count

    orders = {
        "price-desc": lambda p: (-p.price_cents, p.name.lower(), p.id),
        "rating": lambda p: (-p.rating, -p.review_count, p.name.lower(), p.id),
        "name": lambda p: (p.name.lower(), p.id),
    }
    for sort, key in orders.items():
        first_page = browser.get(f"/category/clothing?sort={sort}")
        assert product_names(first_page) == [p.name for p in sorted(expected, key=key)][:PAGE_SIZE], sort
        assert first_page.doc.xpath("//select[@name='sort']/option[@selected]/@value") == [sort]


def test_product_page_shows_options_and_reviews(shop: Shop) -> None:
    browser = shop.browser()
    tshirt = shop.queries.product_by_name(landmarks.TSHIRT)
    page = browser.get(f"/product/{tshirt.id}")
    doc = page.doc
    assert page.texts("//h1") == [tshirt.name]
    assert doc.xpath("//select[@id='size']/option[@value!='']/@value") == list(tshirt.sizes)
    assert doc.xpath("//select[@id='color']/option[@value!='']/@value") == list(tshirt.colors)
    assert doc.xpath("//label[@for='quantity']/text()") == ["Quantity"]
    assert doc.xpath("//form[@action='/cart/add' and @method='post']//button/text()") == ["Add to cart"]
    assert format_price(tshirt.price_cents) in page.texts("//p[contains(@class, 'price')]")

    review_count = shop.queries.review_count(tshirt.id)
    assert len(doc.xpath("//section[@id='reviews']//ol/li/article/h3")) == review_count
    assert f"{tshirt.rating:.1f} out of 5" in page.text()
    assert f"Average rating from {review_count} reviews" in page.text()

    novel = shop.queries.product_by_name(landmarks.NOVEL_WITHOUT_REVIEWS)
    assert "No reviews yet" in browser.get(f"/product/{novel.id}").text()
    sold_out = shop.queries.product_by_name(landmarks.SOLD_OUT_BOTTLE)
    sold_out_page = browser.get(f"/product/{sold_out.id}")
    assert "Out of stock" in sold_out_page.text()
    assert sold_out_page.doc.xpath("//button[normalize-space()='Add to cart']/@disabled")


# Cart


def test_add_to_cart_update_and_remove(shop: Shop) -> None:
    browser = shop.browser()
    tshirt = shop.queries.product_by_name(landmarks.TSHIRT)
    page = browser.post("/cart/add", {"product_id": str(tshirt.id), "size": "M", "color": "Navy", "quantity": "2"})
    assert page.status == 200 and urllib.parse.urlparse(page.url).path == "/cart"
    assert f"Added {tshirt.name} to your cart." in page.texts("//*[@role='status']")
    rows = page.texts("//table//tbody/tr")
    assert len(rows) == 1 and tshirt.name in rows[0] and "Size M, Navy" in rows[0]
    assert page.texts("//dd[@class='subtotal']") == [format_price(2 * tshirt.price_cents)]
    assert page.texts("//a[@href='/cart']")[0] == "Cart 2 items"

    [line] = shop.queries.cart_lines(browser.session_token)
    assert (line.product_id, line.size, line.color, line.quantity) == (tshirt.id, "M", "Navy", 2)

    page = browser.post("/cart/update", {"line_id": str(line.id), "quantity": "3"})
    assert page.texts("//dd[@class='subtotal']") == [format_price(3 * tshirt.price_cents)]
    assert shop.queries.cart_lines(browser.session_token)[0].quantity == 3

    page = browser.post("/cart/remove", {"line_id": str(line.id)})
    assert "Your cart is empty." in page.text()
    assert shop.queries.cart_lines(browser.session_token) == ()


def test_add_to_cart_requires_a_size_and_stock(shop: Shop) -> None:
    browser = shop.browser()
    tshirt = shop.queries.product_by_name(landmarks.TSHIRT)
    page = browser.post("/cart/add", {"product_id": str(tshirt.id), "color": "Navy", "quantity": "1"})
    assert page.status == 422
    assert page.texts("//*[@role='alert']") == ["Please choose a size."]
    assert page.doc.xpath("//select[@id='color']/option[@selected]/@value") == ["Navy"]
    assert shop.queries.cart_lines(browser.session_token) == ()

    sold_out = shop.queries.product_by_name(landmarks.SOLD_OUT_BOTTLE)
    page = browser.add_to_cart(sold_out)
    assert page.status == 422 and "out of stock" in page.texts("//*[@role='alert']")[0]


# Checkout


def test_checkout_validation_keeps_values_but_not_card_data(shop: Shop) -> None:
    browser = shop.browser()
    browser.add_to_cart(shop.queries.product_by_name(landmarks.BACKPACK))
    orders_before = shop.queries.order_count()
    form = dict(VALID_CHECKOUT, email="not-an-email", address="  ", card_number="4242 4242 4242 4241",
                card_expiry="01/24", card_cvc="12")
    page = browser.post("/checkout", form)
    assert page.status == 422
    summary = page.texts("//*[@role='alert']//li")
    assert summary == [
        "Enter a valid email address, like name@example.com.",
        "Enter your street address.",
        "That card number is not valid. Check the digits and try again.",
        "This card has expired. Use a different card.",
        "Enter the 3-digit security code from your card.",
    ]
    doc = page.doc
    assert doc.xpath("//input[@id='full_name']/@value") == ["Ada Guest"]
    assert doc.xpath("//input[@id='email']/@value") == ["not-an-email"]
    assert doc.xpath("//input[@id='email']/@aria-invalid") == ["true"]
    for card_field in ("card_number", "card_expiry", "card_cvc"):
        assert doc.xpath(f"//input[@id='{card_field}']/@value") == [""]
    assert "4241" not in page.html
    assert shop.queries.order_count() == orders_before
    assert len(shop.queries.cart_lines(browser.session_token)) == 1


def test_placing_an_order_records_it_decreases_stock_and_empties_the_cart(shop: Shop) -> None:
    browser = shop.browser()
    backpack = shop.queries.product_by_name(landmarks.BACKPACK)
    browser.add_to_cart(backpack, quantity=2)
    assert browser.get("/checkout").doc.xpath("//form[@action='/checkout']/@method") == ["post"]

    page = browser.post("/checkout", VALID_CHECKOUT)
    assert page.status == 200
    number = page.texts("//strong[@class='order-number']")[0]
    assert urllib.parse.urlparse(page.url).path == f"/checkout/confirmation/{number}"

    order = shop.queries.order(number)
    assert order is not None
    assert order.user_id is None and order.email == VALID_CHECKOUT["email"] and order.card_last4 == "4242"
    assert [(line.product_id, line.quantity, line.color) for line in order.lines] == [
        (backpack.id, 2, backpack.colors[-1])
    ]
    assert order.subtotal_cents == 2 * backpack.price_cents
    assert order.shipping_cents == 0  # standard shipping is free from $50
    assert order.placed_at == FIXED_NOW
    assert format_price(order.total_cents) in page.text()
    assert shop.queries.stock(backpack.id) == backpack.stock - 2
    assert shop.queries.cart_lines(browser.session_token) == ()
    assert "Your cart is empty." in browser.get("/cart").text()

    # Only the session that placed it can see the confirmation.
    assert shop.browser().get(f"/checkout/confirmation/{number}").status == 404


def test_signed_in_order_shows_in_that_users_history(shop: Shop) -> None:
    browser = shop.browser()
    browser.add_to_cart(shop.queries.product_by_name(landmarks.HERB_PLANTER))
    browser.sign_in(OTHER_USER.email, OTHER_USER.password)
    checkout = browser.get("/checkout")
    assert checkout.doc.xpath("//input[@id='email']/@value") == [OTHER_USER.email]  # prefilled from the account
    page = browser.post("/checkout", dict(VALID_CHECKOUT, email=OTHER_USER.email, country="CA", zip_code="M5E 1C5"))
    number = page.texts("//strong[@class='order-number']")[0]

    user = shop.queries.user(OTHER_USER.email)
    order = shop.queries.order(number)
    assert user is not None and order is not None and order.user_id == user.id
    history = browser.get("/orders")
    assert history.texts("//table//tbody/tr/th")[0] == number


# Accounts


def test_order_history_requires_sign_in(shop: Shop) -> None:
    browser = shop.browser()
    page = browser.get("/orders", follow=False)
    assert page.status == 303
    assert page.headers["Location"] == "/login?next=/orders"
    page = browser.get("/orders")
    assert urllib.parse.urlparse(page.url).path == "/login"
    assert page.doc.xpath("//input[@name='next']/@value") == ["/orders"]


def test_wrong_password_shows_an_error(shop: Shop) -> None:
    browser = shop.browser()
    page = browser.sign_in(DEMO_USER.email, "not-the-password")
    assert page.status == 422
    assert page.texts("//*[@role='alert']") == ["The email address or password is incorrect. Please try again."]
    assert page.doc.xpath("//input[@id='email']/@value") == [DEMO_USER.email]
    assert browser.get("/orders", follow=False).status == 303


def test_demo_user_sees_only_their_own_orders(shop: Shop) -> None:
    browser = shop.browser()
    page = browser.sign_in(DEMO_USER.email, DEMO_USER.password, next_path="/orders")
    assert urllib.parse.urlparse(page.url).path == "/orders"
    expected = shop.queries.orders_for(DEMO_USER.email)
    assert len(expected) >= 3
    assert page.texts("//table//tbody/tr/th") == [order.number for order in expected]
    for order in expected:
        assert format_price(order.total_cents) in page.text()

    newest = expected[0]
    detail = browser.get(f"/orders/{newest.number}")
    assert detail.texts("//h1") == [f"Order {newest.number}"]
    assert len(detail.doc.xpath("//table//tbody/tr")) == len(newest.lines)

    others = shop.queries.orders_for(OTHER_USER.email)
    assert others and browser.get(f"/orders/{others[-1].number}").status == 404

    account = browser.get("/account")
    assert DEMO_USER.name in account.text() and DEMO_USER.email in account.text()
    browser.post("/logout", {})
    assert browser.get("/orders", follow=False).status == 303
