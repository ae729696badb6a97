"""Builds the labelled corpus of the destructive-action classifier from real actions on the sandbox shop.

    python -m branchwise.bench.safety_corpus [--write] [--out PATH]

Every case runs from a fresh state: a new shop server on a copy of one seeded database (new port, fresh page), the
case's setup in the browser (sign in, fill a cart), its page loaded anew and any preparing steps (choose a size, type
a quantity). Then the target is observed and inspected (what the classifier sees), the shop's database fingerprinted,
the action executed in real Chromium through the extension, and the database fingerprinted again: the label is
whether the fingerprint changed. Links and buttons of a sample of pages are enumerated (click every one); the forms
get written cases (type with and without Enter, select, add to cart, update, remove, checkout, sign in and out).

Without --write it prints a summary and writes nothing. Takes a few minutes (one page load and setup per case).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from ..actions import Action, Click, GoBack, GoForward, Goto, Hover, Press, Scroll, SelectOption, Type
from ..agent.env import BrowserEnv, EnvView
from ..browser import BrowserDisconnected
from ..config import ServerConfig
from ..launcher import ChromiumConfig
from ..observation import ElementInfo
from ..safety.corpus import DEFAULT_CORPUS, CorpusElement, CorpusRecord, SafetyCorpus
from ..sandbox import DEALS_PATH, DEFAULT_SEED, DEMO_USER, ShopConfig, ShopQueries, ShopServer, create_shop_database
from ..sandbox.database import fingerprint
from ..session import Session, open_session

log = logging.getLogger(__name__)

T = TypeVar("T")

# Records name the shop by one fixed origin; each case really ran on its own port.
ORIGIN = "http://127.0.0.1:8800"
# A request a click started may still be in flight when the tab reports "complete".
SETTLE_SECONDS = 0.4
CARD = ("4242 4242 4242 4242", "12/39", "123")

StepKind = Literal["click", "type", "press", "select", "hover", "scroll", "goto", "go_back", "go_forward"]


@dataclass(frozen=True)
class Target:
    """An element by role and accessible name (a trailing '*' matches a prefix), the n-th such in page order."""

    role: str
    name: str
    occurrence: int = 0

    def matches(self, element: ElementInfo) -> bool:
        if element.role != self.role:
            return False
        if self.name.endswith("*"):
            return element.name.startswith(self.name[:-1])
        return element.name == self.name


@dataclass(frozen=True)
class Step:
    kind: StepKind
    target: Target | None = None
    text: str = ""
    enter: bool = False
    keys: str = ""
    values: tuple[str, ...] = ()
    url: str = ""

    def describe(self) -> str:
        what = f" {self.target.role} '{self.target.name}'" if self.target else ""
        what += f"#{self.target.occurrence}" if self.target and self.target.occurrence else ""
        extra = {"type": f" [{self.text}]{' +Enter' if self.enter else ''}", "press": f" [{self.keys}]",
                 "select": f" {list(self.values)}", "goto": f" {self.url}", "scroll": " down"}.get(self.kind, "")
        return f"{self.kind}{what}{extra}"


def click(role: str, name: str, occurrence: int = 0) -> Step:
    return Step("click", Target(role, name, occurrence))


def type_in(role: str, name: str, text: str, enter: bool = False) -> Step:
    return Step("type", Target(role, name), text=text, enter=enter)


def select(name: str, *values: str) -> Step:
    return Step("select", Target("combobox", name), values=values)


def goto(url: str) -> Step:
    return Step("goto", url=url)


@dataclass(frozen=True)
class Case:
    state: str
    path: str
    action: Step
    prepare: tuple[Step, ...] = ()

    @property
    def id(self) -> str:
        steps = "".join(f" after {s.describe()};" for s in self.prepare)
        return f"{self.state} {self.path}:{steps} {self.action.describe()}"


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


# A state is the visits (page, steps) that bring a fresh shop there, in the browser like a user.
Setup = tuple[tuple[str, tuple[Step, ...]], ...]


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


def to_action(step: Step, view: EnvView) -> Action:
    """The typed action for a step on the observed page; LookupError when its element is not there."""
    element_id = None
    if step.target is not None:
        assert view.page is not None, "a dialog is open"
        found = [e.id for e in view.page.elements.values() if step.target.matches(e)]
        if len(found) <= step.target.occurrence:
            raise LookupError(f"no {step.target} on {view.url}")
        element_id = found[step.target.occurrence]
    match step.kind:
        case "click":
            assert element_id is not None
            return Click(element_id)
        case "type":
            assert element_id is not None
            return Type(element_id, step.text, step.enter)
        case "press":
            return Press(step.keys, element_id)
        case "select":
            assert element_id is not None
            return SelectOption(element_id, step.values)
        case "hover":
            assert element_id is not None
            return Hover(element_id)
        case "scroll":
            return Scroll("down")
        case "goto":
            return Goto(step.url)
        case "go_back":
            return GoBack()
        case "go_forward":
            return GoForward()
    raise ValueError(f"unknown step kind {step.kind}")


@dataclass
class Runner:
    session: Session
    template: Path
    work: Path
    fx: Fixtures
    tab_id: int = 0
    setups: dict[str, Setup] = field(default_factory=dict)

    async def fresh(self, state: str, shop: ShopServer) -> BrowserEnv:
        """The working tab on a fresh shop in `state`."""
        if not self.tab_id:
            self.tab_id = (await self.session.browser.open_tab(shop.base_url + "/")).tab_id
        env = BrowserEnv(self.session.browser, self.tab_id)
        for path, steps in self.setups[state]:
            await self.perform(env, shop.base_url, goto(path))
            for step in steps:
                await self.perform(env, shop.base_url, step)
        return env

    async def perform(self, env: BrowserEnv, base: str, step: Step) -> None:
        if step.kind == "goto" and step.url.startswith("/"):
            step = Step("goto", url=base + step.url)
        result = await env.execute(to_action(step, await env.observe()))
        if not result.ok:
            raise LookupError(f"{step.describe()} failed: {result.error}")

    def shop(self) -> ShopServer:
        db = self.work / "shop.sqlite3"
        shutil.copyfile(self.template, db)
        return ShopServer(ShopConfig(db_path=db, reset=False))

    async def enumerate(self, state: str, path: str, links: int) -> list[Case]:
        with self.shop() as shop:
            env = await self.fresh(state, shop)
            await self.perform(env, shop.base_url, goto(path))
            view = await env.observe()
        assert view.page is not None
        seen: dict[tuple[str, str], int] = {}
        buttons: list[Case] = []
        found_links: list[Case] = []
        for element in view.page.elements.values():
            if element.role not in ("link", "button"):
                continue
            key = (element.role, element.name)
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            if element.role == "button":
                buttons.append(Case(state, path, click("button", element.name, occurrence)))
            elif occurrence == 0:
                found_links.append(Case(state, path, click("link", element.name)))
        stride = max(1, len(found_links) / links) if links else 0
        sampled = [found_links[int(i * stride)] for i in range(min(links, len(found_links)))]
        return buttons + sampled

    async def measure(self, case: Case) -> CorpusRecord:
        with self.shop() as shop:
            base = shop.base_url
            env = await self.fresh(case.state, shop)
            await self.perform(env, base, goto(case.path))
            for step in case.prepare:
                await self.perform(env, base, step)
            action_step = Step("goto", url=base + case.action.url) if case.action.kind == "goto" else case.action
            view = await env.observe()
            action = to_action(action_step, view)
            element = facts = None
            if action.element_id is not None and view.page is not None:
                info = view.page.elements[action.element_id]
                element = CorpusElement(role=info.role, name=info.name, props=dict(info.props),
                                        ancestors=[(s.role, s.name) for s in info.locator.ancestors])
                facts = (await env.inspect([action.element_id])).get(action.element_id)
            before = fingerprint(shop.config.db_path)
            result = await env.execute(action)
            await asyncio.sleep(SETTLE_SECONDS)
            after = fingerprint(shop.config.db_path)
            url_after = (await env.observe()).url
            record = CorpusRecord(id=case.id, state=case.state, page_url=view.url, action=action.to_text(),
                                  element=element, facts=facts, changed_server_state=before != after, ok=result.ok,
                                  error=result.error, url_after=url_after)
            # One origin for every record: each case ran on its own port.
            return CorpusRecord.model_validate_json(record.model_dump_json().replace(base, ORIGIN))


async def _twice(session: Session, attempt: Callable[[], Awaitable[T]]) -> T:
    """Runs `attempt` again once if the extension's worker restarted under it (it reconnects within a second)."""
    try:
        return await attempt()
    except BrowserDisconnected as exc:
        log.info("%s; trying again once the extension is back", exc)
        await session.browser.connected()
        return await attempt()


def _expand(path: str, fx: Fixtures) -> str:
    return path.format(category=fx.category, search=fx.search, options=fx.options, sold_out=fx.sold_out,
                       order=fx.order)


async def build(work: Path, enumerated: Sequence[tuple[str, str, int]] = ENUMERATED) -> SafetyCorpus:
    template = work / "template.sqlite3"
    create_shop_database(template, DEFAULT_SEED)
    fx = Fixtures.of(template)
    async with open_session(ServerConfig(port=0, data_dir=work / "data"), ChromiumConfig(headless=True)) as session:
        runner = Runner(session, template, work, fx, setups=setups(fx))
        cases = written_cases(fx)
        for state, path, links in enumerated:
            cases += await _twice(session, functools.partial(runner.enumerate, state, _expand(path, fx), links))
        unique = list({case.id: case for case in cases}.values())
        records: list[CorpusRecord] = []
        for n, case in enumerate(unique, 1):
            try:
                records.append(await _twice(session, functools.partial(runner.measure, case)))
            except LookupError as exc:
                log.warning("skipped %s: %s", case.id, exc)
                continue
            log.info("%d/%d %s -> %s", n, len(unique), case.id,
                     "changed" if records[-1].changed_server_state else "unchanged")
    return SafetyCorpus(
        description="Actions taken in real Chromium on the sandbox shop (branchwise.bench.safety_corpus); "
                    "changed_server_state compares the shop's SQLite fingerprint before and after each action.",
        origin=ORIGIN, shop_seed=DEFAULT_SEED, records=records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="write the corpus (default: only print a summary)")
    parser.add_argument("--out", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    with tempfile.TemporaryDirectory(prefix="branchwise-safety-corpus-") as tmp:
        corpus = asyncio.run(build(Path(tmp)))
    changed = sum(r.changed_server_state for r in corpus.records)
    sys.stdout.write(f"{len(corpus.records)} actions, {changed} changed server state\n")
    if args.write:
        args.out.write_text(corpus.model_dump_json(indent=1, exclude_defaults=True) + "\n")
        sys.stdout.write(f"wrote {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
