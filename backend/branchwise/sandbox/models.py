"""Typed records read from the shop database; shared by the web layer and the test query helpers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime


@dataclass(frozen=True)
class Category:
    id: int
    slug: str
    name: str
    blurb: str
    # Books have an author where other goods have a brand.
    brand_label: str


@dataclass(frozen=True)
class Product:
    id: int
    category_slug: str
    category_name: str
    brand_label: str
    sku: str
    name: str
    brand: str
    description: str
    price_cents: int
    stock: int
    rating: float
    review_count: int
    sizes: tuple[str, ...]
    colors: tuple[str, ...]

    @property
    def in_stock(self) -> bool:
        return self.stock > 0


@dataclass(frozen=True)
class Review:
    id: int
    product_id: int
    author: str
    rating: int
    title: str
    body: str
    created_on: date


@dataclass(frozen=True)
class User:
    id: int
    email: str
    name: str
    address: str
    city: str
    zip_code: str
    country: str


@dataclass(frozen=True)
class Session:
    id: int
    token: str
    user_id: int | None


@dataclass(frozen=True)
class CartLine:
    id: int
    product_id: int
    product_name: str
    sku: str
    size: str
    color: str
    unit_price_cents: int
    quantity: int
    stock: int

    @property
    def line_total_cents(self) -> int:
        return self.unit_price_cents * self.quantity


@dataclass(frozen=True)
class Cart:
    lines: tuple[CartLine, ...]

    @property
    def subtotal_cents(self) -> int:
        return sum(line.line_total_cents for line in self.lines)

    @property
    def item_count(self) -> int:
        return sum(line.quantity for line in self.lines)

    @property
    def is_empty(self) -> bool:
        return not self.lines


@dataclass(frozen=True)
class OrderLine:
    product_id: int
    product_name: str
    sku: str
    size: str
    color: str
    unit_price_cents: int
    quantity: int

    @property
    def line_total_cents(self) -> int:
        return self.unit_price_cents * self.quantity


@dataclass(frozen=True)
class Order:
    id: int
    number: str
    user_id: int | None
    session_id: int | None
    placed_at: datetime
    status: str
    full_name: str
    email: str
    address: str
    city: str
    zip_code: str
    country: str
    shipping_method: str
    card_brand: str
    card_last4: str
    subtotal_cents: int
    shipping_cents: int
    total_cents: int
    lines: tuple[OrderLine, ...]

    @property
    def item_count(self) -> int:
        return sum(line.quantity for line in self.lines)
