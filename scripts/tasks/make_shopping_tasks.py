"""Writes the sandbox shop's task suite, tasks/dev/shopping.json and tasks/test/shopping.json, in WebArena's format.

Every reference answer and expected row is computed from a freshly seeded shop database (the default seed), never
typed by hand. Deterministic: running it again rewrites both files byte for byte.

    .venv/bin/python scripts/tasks/make_shopping_tasks.py [--out ROOT]   # ROOT defaults to the repository
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from branchwise.harness.authoring import Step, dumps, fill, step
from branchwise.sandbox import DEFAULT_SEED, DEMO_USER, ShopQueries, create_shop_database
from branchwise.sandbox.catalog import SortOrder
from branchwise.sandbox.models import Product
from branchwise.sandbox.pricing import SHIPPING_METHODS, format_price

ROOT = Path(__file__).resolve().parents[2]
SITE = "shopping"
HOME = "__SHOPPING__"
SEARCH_BOX = "Search products"
# A test card the shop accepts (Luhn-valid Visa), with an expiry far enough ahead.
CARD = {"number": "4242 4242 4242 4242", "expiry": "12/35", "cvc": "123"}

Task = dict[str, Any]


def search(text: str) -> Step:
    return step("type", "searchbox", SEARCH_BOX, text, enter=True)


def open_product(product: Product) -> list[Step]:
    return [search(product.name), step("click", "link", product.name)]


def string_eval(answers: dict[str, Any], raw: str = "", note: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"eval_types": ["string_match"], "reference_answers": answers, "reference_url": "",
                            "program_html": [], "string_note": note}
    if raw:
        spec["reference_answer_raw_annotation"] = raw
    return spec


def unachievable(note: str) -> dict[str, Any]:
    return string_eval({"fuzzy_match": "N/A"}, note=note)


def url_eval(url: str) -> dict[str, Any]:
    return {"eval_types": ["url_match"], "reference_answers": None, "reference_url": url, "program_html": [],
            "url_note": "GOLD in PRED"}


def db_eval(query: str, rows: list[list[Any]]) -> dict[str, Any]:
    return {"eval_types": ["db_check"], "reference_answers": None, "reference_url": "", "program_html": [],
            "db_check": [{"site": SITE, "query": query, "rows": rows, "ordered": True}]}


def task(template_id: int, template: str, values: dict[str, Any], spec: dict[str, Any], steps: list[Step],
         answer: str = "", login: bool = False, start_url: str = HOME) -> Task:
    return {
        "sites": [SITE],
        "require_login": login,
        "storage_state": None,
        "start_url": start_url,
        "geolocation": None,
        "intent_template": template,
        "instantiation_dict": values,
        "intent": fill(template, values),
        "require_reset": False,
        "eval": spec,
        "intent_template_id": template_id,
        "reference_solution": {"steps": steps, "answer": answer},
    }


def existing_tasks() -> list[Task]:
    """Tasks 1001-1003, exactly as first written by hand, with their split and reference solution added."""
    base: dict[str, Any] = {"sites": [SITE], "require_login": False, "storage_state": None, "start_url": HOME,
                            "geolocation": None}
    price = "What is the price of the {{product}}?"
    return [
        {"task_id": 1001, **base, "intent_template": price,
         "instantiation_dict": {"product": "Rootstock Self-Watering Herb Planter"},
         "intent": "What is the price of the Rootstock Self-Watering Herb Planter?", "require_reset": False,
         "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["34.50"]},
                  "reference_url": "", "program_html": [], "string_note": "",
                  "reference_answer_raw_annotation": "$34.50"},
         "intent_template_id": 1, "split": "dev",
         "reference_solution": {"steps": [search("Rootstock herb planter"),
                                          step("click", "link", "Rootstock Self-Watering Herb Planter")],
                                "answer": "$34.50"}},
        {"task_id": 1002, **base, "intent_template": "Show me the products of the {{category}} category",
         "instantiation_dict": {"category": "Garden"}, "intent": "Show me the products of the Garden category",
         "require_reset": False,
         "eval": {"eval_types": ["url_match"], "reference_answers": None,
                  "reference_url": "__SHOPPING__/category/garden", "program_html": [], "url_note": "GOLD in PRED"},
         "intent_template_id": 2, "split": "dev",
         "reference_solution": {"steps": [step("click", "link", "Garden")], "answer": ""}},
        {"task_id": 1003, **base, "intent_template": price, "instantiation_dict": {"product": "Acme Pocket Teleporter"},
         "intent": "What is the price of the Acme Pocket Teleporter?", "require_reset": False,
         "eval": {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"},
                  "reference_url": "", "program_html": [], "string_note": "The shop sells no Acme Pocket Teleporter"},
         "intent_template_id": 1, "split": "dev",
         "reference_solution": {"steps": [], "answer": "N/A"}},
    ]


class Facts:
    """Questions about the seeded shop the templates need, beyond ShopQueries."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.q = ShopQueries(db)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db) as conn:
            return list(conn.execute(sql, params).fetchall())

    def absent(self, name: str) -> str:
        """A product name that the shop neither sells nor finds by search."""
        assert not self.q.products_matching(name), name
        return name

    def category(self, slug: str) -> str:
        return next(c.name for c in self.q.categories() if c.slug == slug)

    def unique_cheapest(self, slug: str) -> Product:
        products = self.q.products_in_category(slug)
        assert products[0].price_cents < products[1].price_cents, slug
        return products[0]


def price_tasks(f: Facts) -> list[Task]:
    template = "What is the price of the {{product}}?"
    out = []
    for pid in (20, 32):
        p = f.q.product(pid)
        out.append(task(1, template, {"product": p.name},
                        string_eval({"must_include": [format_price(p.price_cents).lstrip("$")]},
                                    raw=format_price(p.price_cents)),
                        open_product(p), format_price(p.price_cents)))
    name = f.absent("Nimbus Quantum Hoverboard")
    out.append(task(1, template, {"product": name},
                    unachievable(f"The shop sells no {name}: a search for it finds nothing."),
                    [search(name)], "N/A"))
    return out


def category_tasks(f: Facts) -> list[Task]:
    template = "Show me the products of the {{category}} category"
    out = []
    for slug in ("books", "toys-games", "sports-outdoors"):
        name = f.category(slug)
        out.append(task(2, template, {"category": name}, url_eval(f"{HOME}/category/{slug}"),
                        [step("click", "link", name)]))
    return out


def author_tasks(f: Facts) -> list[Task]:
    template = "Who is the author of the book \"{{title}}\"?"
    out = []
    for pid in (73, 66, 81):
        p = f.q.product(pid)
        assert p.category_slug == "books"
        out.append(task(3, template, {"title": p.name}, string_eval({"exact_match": p.brand}),
                        open_product(p), p.brand))
    title = f.absent("The Crimson Cartographer")
    out.append(task(3, template, {"title": title},
                    unachievable(f"The shop has no book called \"{title}\"."), [search(title)], "N/A"))
    return out


def cheapest_tasks(f: Facts) -> list[Task]:
    template = "What is the cheapest product in the {{category}} category?"
    out = []
    for slug in ("electronics", "clothing", "home-kitchen", "garden"):
        name = f.category(slug)
        p = f.unique_cheapest(slug)
        steps = [step("click", "link", name), step("select_option", "combobox", "Sort by",
                                                     SortOrder.PRICE_ASC.label), step("click", "button", "Sort")]
        out.append(task(4, template, {"category": name}, string_eval({"must_include": [p.name]}), steps, p.name))
    return out


def review_count_tasks(f: Facts) -> list[Task]:
    template = "How many customer reviews does the {{product}} have?"
    out = []
    for pid in (24, 151, 197):
        p = f.q.product(pid)
        count = f.q.review_count(pid)
        assert count == p.review_count, p
        out.append(task(5, template, {"product": p.name}, string_eval({"exact_match": str(count)}),
                        open_product(p), str(count)))
    return out


def color_tasks(f: Facts) -> list[Task]:
    template = "Which colors can I choose for the {{product}}?"
    out = []
    for pid in (45, 177, 129):
        p = f.q.product(pid)
        assert p.colors and not p.sizes, p
        out.append(task(6, template, {"product": p.name}, string_eval({"must_include": list(p.colors)},
                                                                      raw=", ".join(p.colors)),
                        open_product(p), ", ".join(p.colors)))
    name = f.absent("Lumora Pro Gaming Chair")
    out.append(task(6, template, {"product": name},
                    unachievable(f"The shop does not sell a {name}."), [search(name)], "N/A"))
    return out


def search_tasks(f: Facts) -> list[Task]:
    template = "Search the shop for \"{{query}}\""
    out = []
    for query in ("solar path lights", "yoga mat", "dutch oven"):
        assert f.q.products_matching(query), query
        out.append(task(7, template, {"query": query}, url_eval(f"{HOME}/search?{urlencode({'q': query})}"),
                        [search(query)]))
    return out


def sorted_tasks(f: Facts) -> list[Task]:
    template = "Show me the {{category}} products sorted by {{order}}"
    out = []
    for slug, order, wording in (("beauty", SortOrder.RATING, "customer rating"),
                                 ("electronics", SortOrder.PRICE_DESC, "price, highest first"),
                                 ("garden", SortOrder.NAME, "name, from A to Z")):
        name = f.category(slug)
        out.append(task(8, template, {"category": name, "order": wording},
                        url_eval(f"{HOME}/category/{slug}?sort={order.value}"),
                        [step("click", "link", name), step("select_option", "combobox", "Sort by", order.label),
                         step("click", "button", "Sort")]))
    return out


CART_QUERY = (
    "SELECT p.name, cl.size, cl.color, cl.quantity FROM cart_lines cl JOIN sessions s ON s.id = cl.session_id"
    " JOIN users u ON u.id = s.user_id JOIN products p ON p.id = cl.product_id"
    f" WHERE u.email = '{DEMO_USER.email}' ORDER BY cl.id"
)


def add_to_cart_tasks(f: Facts) -> list[Task]:
    template = "Add {{quantity}} of the {{product}} to my cart"
    out = []
    for pid, quantity in ((214, 2), (138, 3), (219, 4)):
        p = f.q.product(pid)
        assert not p.sizes and not p.colors and p.stock >= quantity, p
        steps = [*open_product(p), step("type", "spinbutton", "Quantity", str(quantity)),
                 step("click", "button", "Add to cart")]
        out.append(task(9, template, {"quantity": quantity, "product": p.name},
                        db_eval(CART_QUERY, [[p.name, "", "", quantity]]), steps, login=True))
    return out


def option_cart_tasks(f: Facts) -> list[Task]:
    template = "Put the {{product}} in size {{size}}, color {{color}}, in my cart"
    out = []
    for pid, size, color in ((104, "M", "Navy"), (119, "9.5", "Burnt Orange"), (137, "L", "Forest Green")):
        p = f.q.product(pid)
        assert size in p.sizes and color in p.colors and p.stock > 0, p
        steps = [*open_product(p), step("select_option", "combobox", "Size", size),
                 step("select_option", "combobox", "Color", color), step("click", "button", "Add to cart")]
        out.append(task(10, template, {"product": p.name, "size": size, "color": color},
                        db_eval(CART_QUERY, [[p.name, size, color, 1]]), steps, login=True))
    return out


def order_tasks(f: Facts) -> list[Task]:
    template = ("Buy {{quantity}} of the {{product}} with {{shipping}} shipping to my saved address, paying with card "
                f"{CARD['number']}, expiry {CARD['expiry']}, security code {CARD['cvc']}")
    seeded = int(f.rows("SELECT MAX(id) FROM orders")[0][0])
    query = (
        "SELECT o.full_name, o.city, o.shipping_method, o.card_last4, ol.product_name, ol.quantity, o.total_cents"
        " FROM orders o JOIN order_lines ol ON ol.order_id = o.id JOIN users u ON u.id = o.user_id"
        f" WHERE u.email = '{DEMO_USER.email}' AND o.id > {seeded} ORDER BY o.id, ol.id"
    )
    out = []
    for pid, quantity, code in ((163, 2, "standard"), (55, 1, "express"), (148, 3, "standard")):
        p = f.q.product(pid)
        assert not p.sizes and not p.colors and p.stock >= quantity, p
        method = next(m for m in SHIPPING_METHODS if m.code == code)
        subtotal = p.price_cents * quantity
        cost = method.cost_for(subtotal)
        radio = f"{method.label}: {'Free' if cost == 0 else format_price(cost)}"
        steps = [*open_product(p), step("type", "spinbutton", "Quantity", str(quantity)),
                 step("click", "button", "Add to cart"), step("click", "link", "Proceed to checkout"),
                 step("click", "radio", radio), step("type", "textbox", "Card number", CARD["number"]),
                 step("type", "textbox", "Expiry date (MM/YY)", CARD["expiry"]),
                 step("type", "textbox", "Security code (CVC)", CARD["cvc"]), step("click", "button", "Place order")]
        row = [DEMO_USER.name, DEMO_USER.city, code, CARD["number"][-4:], p.name, quantity, subtotal + cost]
        out.append(task(11, template, {"quantity": quantity, "product": p.name, "shipping": code},
                        db_eval(query, [row]), steps, login=True))
    return out


def order_status_tasks(f: Facts) -> list[Task]:
    template = "What is the status of my order {{number}}?"
    out = []
    for order in f.q.orders_for(DEMO_USER.email):
        steps = [step("click", "link", "Orders"), step("click", "link", order.number)]
        out.append(task(12, template, {"number": order.number}, string_eval({"exact_match": order.status}),
                        steps, order.status, login=True))
    mine = {o.number for o in f.q.orders_for(DEMO_USER.email)}
    other = next(number for (number,) in f.rows("SELECT number FROM orders ORDER BY id") if number not in mine)
    out.append(task(12, template, {"number": other},
                    unachievable(f"Order {other} is not in your order history: it belongs to another customer."),
                    [step("click", "link", "Orders")], "N/A", login=True))
    return out


TEMPLATES = (price_tasks, category_tasks, author_tasks, cheapest_tasks, review_count_tasks, color_tasks,
             search_tasks, sorted_tasks, add_to_cart_tasks, option_cart_tasks, order_tasks, order_status_tasks)


def build(db: Path) -> tuple[list[Task], list[Task]]:
    facts = Facts(db)
    dev: list[Task] = existing_tasks()
    test: list[Task] = []
    next_id = 1004
    for make in TEMPLATES:
        for index, item in enumerate(make(facts)):
            split = "dev" if index % 3 == 0 else "test"
            (dev if split == "dev" else test).append({"task_id": next_id, **item, "split": split})
            next_id += 1
    assert next_id <= 1100
    return dev, test


def write(path: Path, tasks: list[Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(tasks), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT, help="folder to write tasks/dev and tasks/test under")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "shop.sqlite3"
        create_shop_database(db, DEFAULT_SEED)
        dev, test = build(db)
    write(args.out / "tasks" / "dev" / "shopping.json", dev)
    write(args.out / "tasks" / "test" / "shopping.json", test)


if __name__ == "__main__":
    main()
