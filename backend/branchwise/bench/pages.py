"""Deterministic shop-listing pages of a chosen size, and a throwaway static server for them.

The pages look like a real catalogue (header, navigation, search, filters, product cards, pagination, footer) so the
accessibility tree has the mix of roles a real page has; only the number of product cards changes with the size.
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.server
import random
import threading
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

# A 1x1 transparent GIF: images are part of a shop page's tree, but fetching them would only add network noise.
PIXEL = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
CATEGORIES = ("Audio", "Cameras", "Computers", "Garden", "Home", "Kitchen", "Outdoor", "Phones", "Sports", "Toys")
BRANDS = ("Acme", "Borealis", "Cobalt", "Dunmore", "Everline", "Fjord", "Granite", "Halcyon")
NOUNS = ("Headphones", "Kettle", "Backpack", "Lamp", "Speaker", "Blender", "Tent", "Watch", "Drill", "Camera")
ADJECTIVES = ("Compact", "Wireless", "Classic", "Pro", "Ultra", "Eco", "Smart", "Travel", "Deluxe", "Mini")


def _card(rng: random.Random, index: int) -> str:
    name = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} {index + 1}"
    brand = rng.choice(BRANDS)
    price = rng.randint(500, 50000) / 100
    rating = rng.randint(5, 10) / 2
    reviews = rng.randint(0, 2000)
    href = f"/product/{index + 1}"
    # Every card has the same element count (a struck-out old price or a unit note) so the page size is predictable.
    old_price = f"<s>${price * 1.25:.2f}</s>" if index % 3 == 0 else '<small>incl. VAT</small>'
    stock = "In stock" if index % 7 else "Only 2 left"
    stars = "★" * int(rating)
    label = html.escape(name)
    return f"""
<article class="card">
  <a href="{href}"><img src="{PIXEL}" alt="{label}" width="160" height="160"></a>
  <h3><a href="{href}">{label}</a></h3>
  <p class="brand">by <a href="/brand/{brand.lower()}">{brand}</a></p>
  <div class="rating"><span aria-label="{rating} out of 5 stars">{stars}</span> <span>({reviews})</span></div>
  <p class="price"><span class="now">${price:.2f}</span> {old_price}</p>
  <ul class="badges"><li>{stock}</li><li>Free delivery</li></ul>
  <div class="actions"><button type="button">Add to cart</button>
    <button type="button" aria-label="Save {label}">♡</button></div>
</article>"""


def _header() -> str:
    nav = "".join(f'<li><a href="/c/{c.lower()}">{c}</a></li>' for c in CATEGORIES)
    return f"""
<header>
  <a href="#main">Skip to main content</a>
  <a href="/"><img src="{PIXEL}" alt="Branchwise Market" width="120" height="32"></a>
  <form role="search" action="/search"><label for="q">Search products</label>
    <input id="q" type="search" name="q" placeholder="Search"><button type="submit">Search</button></form>
  <nav aria-label="Account"><a href="/account">Sign in</a> <a href="/cart">Cart (0)</a></nav>
  <nav aria-label="Categories"><ul>{nav}</ul></nav>
</header>"""


def _filters() -> str:
    brands = "".join(f'<li><label><input type="checkbox" name="brand" value="{b}"> {b}</label></li>' for b in BRANDS)
    return f"""
<aside aria-label="Filters">
  <h2>Filter</h2>
  <fieldset><legend>Brand</legend><ul>{brands}</ul></fieldset>
  <label for="sort">Sort by</label>
  <select id="sort"><option>Featured</option><option>Price: low to high</option><option>Price: high to low</option>
    <option>Newest</option></select>
  <button type="button">Apply</button>
</aside>"""


def _footer() -> str:
    columns = {
        "Help": ("Contact us", "Shipping", "Returns", "Order status"),
        "About": ("Our story", "Careers", "Press", "Sustainability"),
        "Legal": ("Terms", "Privacy", "Cookies", "Accessibility"),
    }
    sections = []
    for title, links in columns.items():
        items = "".join(f'<li><a href="/{t.lower().replace(" ", "-")}">{t}</a></li>' for t in links)
        sections.append(f"<section><h2>{title}</h2><ul>{items}</ul></section>")
    body = "".join(sections)
    return f'<footer>{body}<p>© 2025 Branchwise Market</p></footer>'


def shop_page(cards: int, seed: int = 7) -> str:
    """A listing with `cards` products; the same arguments always give the same bytes."""
    rng = random.Random(seed)
    pages = "".join(f'<li><a href="?page={p}">{p}</a></li>' for p in range(1, 6))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>All products | Branchwise Market</title>
<style>.grid {{ display: grid; grid-template-columns: repeat(4, 1fr); gap: 12px; }}
.card {{ border: 1px solid #ddd; }}</style>
</head><body>{_header()}
<main id="main"><h1>All products</h1><p>{cards} results</p>{_filters()}
<section class="grid" aria-label="Products">{"".join(_card(rng, i) for i in range(cards))}</section>
<nav aria-label="Pagination"><ul>{pages}</ul></nav></main>
{_footer()}</body></html>"""


class _TagCounter(HTMLParser):
    """Counts elements as the parser sees them (the browser's querySelectorAll('*') is the figure we report)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.count += 1


def element_count(document: str) -> int:
    counter = _TagCounter()
    counter.feed(document)
    counter.close()
    return counter.count


def cards_for(target_elements: int) -> int:
    """The number of cards that brings the page closest to `target_elements` elements (the card size is constant)."""
    base = element_count(shop_page(0))
    per_card = element_count(shop_page(1)) - base
    return max(1, round((target_elements - base) / per_card))


def write_pages(root: Path, targets: list[int]) -> dict[int, str]:
    """Writes one page per target size under `root`; returns target -> file name."""
    names = {}
    for target in targets:
        name = f"shop-{target}.html"
        (root / name).write_text(shop_page(cards_for(target)), encoding="utf-8")
        names[target] = name
    return names


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the benchmark's stdout is its report; request lines would only clutter stderr


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serves `root` on 127.0.0.1 from a background thread; yields the base URL."""
    with serve_handler(functools.partial(_QuietHandler, directory=str(root)), "bench-pages") as base_url:
        yield base_url


@contextlib.contextmanager
def serve_handler(handler: Callable[..., http.server.BaseHTTPRequestHandler], name: str) -> Iterator[str]:
    """Serves `handler` on a free port of 127.0.0.1 from a background thread `name`; yields the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
