"""Deterministic generation of the shop's catalog, reviews, accounts and past orders.

Pure: one `random.Random(seed)` drives every choice, in a fixed order, so a seed always yields the same `SeedData`.
Nothing here touches the database; `seeding.py` writes the result.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

from . import landmarks, vocabulary
from .demo_users import DEMO_USER, DEMO_USER_ORDERS, OTHER_USER, OTHER_USER_ORDERS, DemoAccount, PastOrderSpec
from .landmarks import LandmarkProduct
from .models import Category, Order, OrderLine, Product, Review, User
from .orders import order_number
from .passwords import hash_password
from .pricing import shipping_method
from .vocabulary import CategorySpec, NounSpec, OptionSet

REVIEW_PERIOD_START = date(2023, 1, 1)
REVIEW_PERIOD_DAYS = 900
GENERATED_REVIEWS = (3, 12)


@dataclass(frozen=True)
class SeedUser:
    user: User
    password_hash: str


@dataclass(frozen=True)
class SeedData:
    categories: tuple[Category, ...]
    products: tuple[Product, ...]
    reviews: tuple[Review, ...]
    featured_product_ids: frozenset[int]
    users: tuple[SeedUser, ...]
    orders: tuple[Order, ...]


@dataclass(frozen=True)
class _ProductDraft:
    """A product before ids are assigned; reviews are drafted alongside so the rating matches them."""

    name: str
    brand: str
    description: str
    price_cents: int
    stock: int
    sizes: tuple[str, ...]
    colors: tuple[str, ...]
    review_count: int
    quality: float
    featured: bool


class _Generator:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._used_names: set[str] = {landmark.name for landmark in landmarks.LANDMARKS}
        self._used_skus: set[str] = set()

    def generate(self) -> SeedData:
        categories: list[Category] = []
        products: list[Product] = []
        reviews: list[Review] = []
        featured: set[int] = set()
        for position, spec in enumerate(vocabulary.CATEGORIES, start=1):
            category = Category(position, spec.slug, spec.name, spec.blurb, spec.brand_label)
            categories.append(category)
            for draft in self._category_drafts(spec):
                product_id = len(products) + 1
                product_reviews = self._reviews(product_id, spec, draft, first_id=len(reviews) + 1)
                reviews.extend(product_reviews)
                products.append(self._product(product_id, category, spec, draft, product_reviews))
                if draft.featured:
                    featured.add(product_id)
        users = (self._user(1, DEMO_USER), self._user(2, OTHER_USER))
        orders = self._orders(products, ((1, DEMO_USER, DEMO_USER_ORDERS), (2, OTHER_USER, OTHER_USER_ORDERS)))
        return SeedData(tuple(categories), tuple(products), tuple(reviews), frozenset(featured), users, orders)

    def _category_drafts(self, spec: CategorySpec) -> list[_ProductDraft]:
        drafts = [self._generated_draft(spec) for _ in range(spec.product_count)]
        # Landmarks sit among ordinary products rather than at the start of the category.
        for landmark in landmarks.LANDMARKS:
            if landmark.category_slug == spec.slug:
                drafts.insert(self._rng.randint(0, len(drafts)), _landmark_draft(landmark))
        return drafts

    def _generated_draft(self, spec: CategorySpec) -> _ProductDraft:
        rng = self._rng
        while True:
            brand = rng.choice(spec.brands)
            adjective = rng.choice(spec.adjectives)
            noun = rng.choice(spec.nouns)
            name = spec.name_pattern.format(brand=brand, adjective=adjective, noun=noun.noun)
            if name not in self._used_names:
                break
        self._used_names.add(name)
        sizes, colors = self._options(spec, noun)
        return _ProductDraft(
            name=name,
            brand=brand,
            description=self._description(spec, name, brand, adjective, noun),
            price_cents=self._price(noun),
            stock=self._stock(),
            sizes=sizes,
            colors=colors,
            review_count=rng.randint(*GENERATED_REVIEWS),
            quality=rng.uniform(2.6, 4.9),
            featured=False,
        )

    def _description(self, spec: CategorySpec, name: str, brand: str, adjective: str, noun: NounSpec) -> str:
        if spec.brand_label == "Author":
            lead = f"{name} by {brand}."
        else:
            lead = f"The {name} is part of {brand}'s {adjective} collection."
        features = self._rng.sample(spec.features, 2)
        return " ".join([lead, *(feature.format(noun=noun.noun.lower()) for feature in features)])

    def _price(self, noun: NounSpec) -> int:
        dollars = self._rng.randint(noun.min_dollars, noun.max_dollars - 1)
        return dollars * 100 + self._rng.choice((99, 99, 99, 49, 95, 0, 50))

    def _stock(self) -> int:
        roll = self._rng.random()
        if roll < 0.05:
            return 0
        if roll < 0.13:
            return self._rng.randint(1, 4)
        return self._rng.randint(5, 150)

    def _options(self, spec: CategorySpec, noun: NounSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if noun.options is OptionSet.NONE or not spec.colors:
            return (), ()
        colors = self._pick_colors(spec.colors)
        if noun.options is OptionSet.COLOR:
            return (), colors
        if noun.options is OptionSet.APPAREL:
            return vocabulary.APPAREL_SIZES, colors
        if noun.options is OptionSet.GLOVES:
            return vocabulary.GLOVE_SIZES, colors
        start = self._rng.randint(0, 3)
        return vocabulary.SHOE_SIZES[start:], colors

    def _pick_colors(self, palette: tuple[str, ...]) -> tuple[str, ...]:
        chosen = set(self._rng.sample(palette, self._rng.randint(2, min(4, len(palette)))))
        return tuple(color for color in palette if color in chosen)

    def _reviews(self, product_id: int, spec: CategorySpec, draft: _ProductDraft, first_id: int) -> list[Review]:
        rng = self._rng
        reviews = []
        for offset in range(draft.review_count):
            rating = max(1, min(5, round(rng.gauss(draft.quality, 0.8))))
            author = f"{rng.choice(vocabulary.REVIEWER_FIRST_NAMES)} {rng.choice(vocabulary.REVIEWER_INITIALS)}."
            reviews.append(
                Review(
                    id=first_id + offset,
                    product_id=product_id,
                    author=author,
                    rating=rating,
                    title=rng.choice(vocabulary.REVIEW_TITLES[rating]),
                    body=self._review_body(spec, rating),
                    created_on=REVIEW_PERIOD_START + timedelta(days=rng.randint(0, REVIEW_PERIOD_DAYS)),
                )
            )
        return reviews

    def _review_body(self, spec: CategorySpec, rating: int) -> str:
        rng = self._rng
        if rating >= 4:
            details = rng.sample(spec.praise, rng.randint(1, 2))
        elif rating == 3:
            details = [rng.choice(spec.praise), rng.choice(spec.complaints)]
        else:
            details = rng.sample(spec.complaints, rng.randint(1, 2))
        opening = rng.choice(vocabulary.REVIEW_OPENINGS[rating])
        closing = rng.choice(vocabulary.REVIEW_CLOSINGS[rating])
        return " ".join([opening, *details, closing])

    def _product(
        self, product_id: int, category: Category, spec: CategorySpec, draft: _ProductDraft, reviews: list[Review]
    ) -> Product:
        rating = round(sum(review.rating for review in reviews) / len(reviews), 1) if reviews else 0.0
        return Product(
            id=product_id,
            category_slug=category.slug,
            category_name=category.name,
            brand_label=category.brand_label,
            sku=self._sku(spec.sku_prefix),
            name=draft.name,
            brand=draft.brand,
            description=draft.description,
            price_cents=draft.price_cents,
            stock=draft.stock,
            rating=rating,
            review_count=len(reviews),
            sizes=draft.sizes,
            colors=draft.colors,
        )

    def _sku(self, prefix: str) -> str:
        while True:
            sku = f"{prefix}-{self._rng.randint(10000, 99999)}"
            if sku not in self._used_skus:
                self._used_skus.add(sku)
                return sku

    def _user(self, user_id: int, account: DemoAccount) -> SeedUser:
        salt = f"{self._rng.getrandbits(64):016x}"
        user = User(user_id, account.email, account.name, account.address, account.city, account.zip_code,
                    account.country)
        return SeedUser(user, hash_password(account.password, salt))

    def _orders(
        self, products: list[Product], owners: tuple[tuple[int, DemoAccount, tuple[PastOrderSpec, ...]], ...]
    ) -> tuple[Order, ...]:
        history = sorted(
            ((spec, user_id, account) for user_id, account, specs in owners for spec in specs),
            key=lambda entry: entry[0].placed_at,
        )
        return tuple(
            self._order(order_id, user_id, account, spec, products)
            for order_id, (spec, user_id, account) in enumerate(history, start=1)
        )

    def _order(
        self, order_id: int, user_id: int, account: DemoAccount, spec: PastOrderSpec, products: list[Product]
    ) -> Order:
        rng = self._rng
        lines = tuple(
            OrderLine(
                product_id=product.id,
                product_name=product.name,
                sku=product.sku,
                size=rng.choice(product.sizes) if product.sizes else "",
                color=rng.choice(product.colors) if product.colors else "",
                unit_price_cents=product.price_cents,
                quantity=rng.randint(1, 2),
            )
            for product in rng.sample(products, spec.line_count)
        )
        subtotal = sum(line.line_total_cents for line in lines)
        method = shipping_method(spec.shipping_method)
        if method is None:
            raise ValueError(f"unknown shipping method in seed data: {spec.shipping_method}")
        shipping = method.cost_for(subtotal)
        return Order(
            id=order_id,
            number=order_number(order_id),
            user_id=user_id,
            session_id=None,
            placed_at=spec.placed_at,
            status=spec.status,
            full_name=account.name,
            email=account.email,
            address=account.address,
            city=account.city,
            zip_code=account.zip_code,
            country=account.country,
            shipping_method=method.code,
            card_brand=spec.card_brand,
            card_last4=spec.card_last4,
            subtotal_cents=subtotal,
            shipping_cents=shipping,
            total_cents=subtotal + shipping,
            lines=lines,
        )


def _landmark_draft(landmark: LandmarkProduct) -> _ProductDraft:
    return _ProductDraft(
        name=landmark.name,
        brand=landmark.brand,
        description=landmark.description,
        price_cents=landmark.price_cents,
        stock=landmark.stock,
        sizes=landmark.sizes,
        colors=landmark.colors,
        review_count=landmark.review_count,
        quality=landmark.quality,
        featured=True,
    )


def generate(seed: int) -> SeedData:
    return _Generator(seed).generate()
