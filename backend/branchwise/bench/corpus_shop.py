"""The shop's part of the safety corpus: every form of the shop (search, sorting, add to cart, cart, checkout, sign
in and out) as written cases, and the buttons and links of 14 sample pages."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import DEALS_PATH, DEMO_USER, ShopQueries
from .corpus_steps import Case, Page, Setup, SitePlan, Step, Target, click, goto, select, type_in

CARD = ("4242 4242 4242 4242", "12/39", "123")


@dataclass(frozen=True)
class Fixtures:
    """The seeded shop's products, pages and accounts the cases use."""

    plain: int
    options: int
    options_size: str
    options_color: str
    sold_out: int
    category: str
    search: str
    order: str
    email: str = DEMO_USER.email
    password: str = DEMO_USER.password

    @classmethod
    def of(cls, db: Path) -> Fixtures:
        shop = ShopQueries(db)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            plain = conn.execute("SELECT id FROM products WHERE stock >= 10 AND id NOT IN "
                                 "(SELECT product_id FROM product_options) ORDER BY id LIMIT 1").fetchone()
            sold_out = conn.execute("SELECT id FROM products WHERE stock = 0 ORDER BY id LIMIT 1").fetchone()
        options = shop.product_with_sizes_and_colors()
        return cls(plain=plain[0], options=options.id, options_size=options.sizes[0], options_color=options.colors[0],
                   sold_out=sold_out[0], category=shop.categories()[0].slug, search="shirt",
                   order=shop.orders_for(DEMO_USER.email)[0].number)


def setups(fx: Fixtures) -> dict[str, Setup]:
    add_plain = (f"/product/{fx.plain}", (click("button", "Add to cart"),))
    add_options = (f"/product/{fx.options}", (select("Size", fx.options_size), select("Color", fx.options_color),
                                               click("button", "Add to cart")))
    sign_in = ("/login", (type_in("textbox", "Email address", fx.email), type_in("textbox", "Password", fx.password),
                          click("button", "Sign in")))
    return {
        "guest": (),
        "guest-cart": (add_plain, add_options),
        "signed-in": (sign_in,),
        "signed-in-cart": (sign_in, add_plain),
    }


# (state, page, how many links to click there): every button is clicked, links are sampled evenly.
ENUMERATED: tuple[tuple[str, str, int], ...] = (
    ("guest", "/", 14),
    ("guest", "/category/{category}", 10),
    ("guest", "/search?q={search}", 6),
    ("guest", "/product/{options}", 6),
    ("guest", "/product/{sold_out}", 3),
    ("guest", "/login", 3),
    ("guest", "/cart", 3),
    ("guest", DEALS_PATH, 3),
    ("guest", "/no-such-page", 2),
    ("guest-cart", "/cart", 6),
    ("guest-cart", "/checkout", 3),
    ("signed-in", "/account", 6),
    ("signed-in", "/orders", 4),
    ("signed-in", "/orders/{order}", 4),
)


def written_cases(fx: Fixtures) -> list[Case]:
    """Form interactions, key presses and the untargeted actions."""
    header = ("searchbox", "Search products")
    hero = ("searchbox", "What are you looking for?")
    qty = ("spinbutton", "Quantity")
    plain, options, cart = f"/product/{fx.plain}", f"/product/{fx.options}", "/cart"
    chosen = (select("Size", fx.options_size), select("Color", fx.options_color))
    line_qty = ("spinbutton", "Quantity of *")
    address = (type_in("textbox", "Full name", "Ada Lovelace"), type_in("textbox", "Email address", "ada@example.com"),
               type_in("textbox", "Street address", "12 Analytical Row"),
               type_in("textbox", "Town or city", "Portland"), type_in("textbox", "ZIP or postal code", "97205"))
    card = (type_in("textbox", "Card number", CARD[0]), type_in("textbox", "Expiry date (MM/YY)", CARD[1]))
    cvc = ("textbox", "Security code (CVC)")
    category = f"/category/{fx.category}"
    return [
        # Search fields: typing, Enter, the Search button, a pressed Enter.
        Case("guest", "/", type_in(*header, "lamp")),
        Case("guest", "/", type_in(*header, "lamp", enter=True)),
        Case("guest", "/", type_in(*hero, "backpack", enter=True)),
        Case("guest", "/", click("button", "Search"), (type_in(*header, "tent"),)),
        Case("guest", "/", Step("press", Target(*header), keys="Enter"), (type_in(*header, "lamp"),)),
        Case("guest", "/", Step("press", keys="Enter"), (type_in(*header, "lamp"),)),
        Case("guest", "/search", type_in("searchbox", "Search products", "shirt", enter=True)),
        Case("guest", "/", Step("press", keys="Tab")),
        # Untargeted actions.
        Case("guest", "/", Step("scroll")),
        Case("guest", "/", Step("hover", Target("link", "Cart*"))),
        Case("guest", "/", goto(category)),
        Case("guest", "/", Step("go_back"), (goto(category),)),
        Case("guest", "/", Step("go_forward"), (goto(category), Step("go_back"))),
        # Sorting a listing: a GET form.
        Case("guest", category, select("Sort by", "Price: low to high")),
        Case("guest", category, click("button", "Sort"), (select("Sort by", "Price: high to low"),)),
        Case("guest", f"/search?q={fx.search}", click("button", "Sort"), (select("Sort by", "Name: A to Z"),)),
        # Product pages: the add-to-cart POST form with and without its required choices.
        Case("guest", options, select("Size", fx.options_size)),
        Case("guest", options, select("Color", fx.options_color)),
        Case("guest", options, type_in(*qty, "2")),
        Case("guest", options, type_in(*qty, "2", enter=True)),
        Case("guest", options, type_in(*qty, "2", enter=True), chosen),
        Case("guest", options, click("button", "Add to cart"), chosen),
        Case("guest", plain, type_in(*qty, "3", enter=True)),
        Case("guest", plain, Step("press", Target(*qty), keys="Enter"), (type_in(*qty, "2"),)),
        Case("guest", plain, click("button", "Add to cart"), (type_in(*qty, "4"),)),
        # The cart: update by button, Enter and a pressed Enter (its Remove buttons are among the enumerated ones).
        Case("guest-cart", cart, click("button", "Update quantity of *"), (type_in(*line_qty, "3"),)),
        Case("guest-cart", cart, type_in(*line_qty, "2", enter=True)),
        Case("guest-cart", cart, type_in(*line_qty, "0", enter=True)),
        Case("guest-cart", cart, type_in(*line_qty, "5")),
        Case("guest-cart", cart, Step("press", Target(*line_qty), keys="Enter"), (type_in(*line_qty, "4"),)),
        # Checkout: the order form, complete and not.
        Case("guest-cart", "/checkout", click("button", "Place order"), (*address, *card, type_in(*cvc, CARD[2]))),
        Case("guest-cart", "/checkout", type_in(*cvc, CARD[2], enter=True), (*address, *card)),
        Case("guest-cart", "/checkout", type_in("textbox", "Full name", "Ada Lovelace", enter=True)),
        Case("guest-cart", "/checkout", type_in("textbox", "Full name", "Ada Lovelace")),
        Case("guest-cart", "/checkout", select("Country", "Canada")),
        Case("guest-cart", "/checkout", click("radio", "Express shipping*")),
        Case("signed-in-cart", "/checkout", click("button", "Place order"), (*card, type_in(*cvc, CARD[2]))),
        Case("signed-in-cart", cart, click("link", "Proceed to checkout")),
        # Signing in: right and wrong password, Enter in each field.
        Case("guest", "/login", type_in("textbox", "Email address", fx.email)),
        Case("guest", "/login", type_in("textbox", "Email address", fx.email, enter=True)),
        Case("guest", "/login", click("button", "Sign in"),
             (type_in("textbox", "Email address", fx.email), type_in("textbox", "Password", "wrong-password"))),
        Case("guest", "/login", click("button", "Sign in"),
             (type_in("textbox", "Email address", fx.email), type_in("textbox", "Password", fx.password))),
        Case("guest", "/login", type_in("textbox", "Password", fx.password, enter=True),
             (type_in("textbox", "Email address", fx.email),)),
        Case("guest", "/login", type_in("textbox", "Password", "wrong-password", enter=True),
             (type_in("textbox", "Email address", fx.email),)),
        # Signed in: searching and leaving.
        Case("signed-in", "/account", type_in(*header, "lamp", enter=True)),
        Case("signed-in-cart", cart, click("button", "Sign out")),
    ]


def _expand(path: str, fx: Fixtures) -> str:
    return path.format(category=fx.category, search=fx.search, options=fx.options, sold_out=fx.sold_out,
                       order=fx.order)


def shop_plan(db: Path) -> SitePlan:
    fx = Fixtures.of(db)
    return SitePlan(setups(fx), tuple(Page(state, _expand(path, fx), links) for state, path, links in ENUMERATED),
                    tuple(written_cases(fx)))
