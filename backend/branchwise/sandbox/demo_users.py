"""Accounts that exist in every seeded shop. The demo user has a few past orders so order history has content."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class DemoAccount:
    email: str
    password: str
    name: str
    address: str
    city: str
    zip_code: str
    country: str


@dataclass(frozen=True)
class PastOrderSpec:
    """A historical order; its lines are picked by the generator from the seeded catalog."""

    placed_at: datetime
    status: str
    line_count: int
    shipping_method: str
    card_brand: str
    card_last4: str


DEMO_USER = DemoAccount(
    email="emma.lopez@example.com",
    password="shop-demo-2024",
    name="Emma Lopez",
    address="742 Maple Avenue",
    city="Portland",
    zip_code="97205",
    country="US",
)

# A second customer whose orders must never show up in the demo user's history.
OTHER_USER = DemoAccount(
    email="liam.chen@example.com",
    password="harbor-lights-88",
    name="Liam Chen",
    address="18 Wellington Street",
    city="Toronto",
    zip_code="M5E 1C5",
    country="CA",
)

DEMO_USER_ORDERS: tuple[PastOrderSpec, ...] = (
    PastOrderSpec(datetime(2024, 11, 3, 14, 22), "Delivered", 2, "standard", "Visa", "4242"),
    PastOrderSpec(datetime(2025, 1, 17, 9, 5), "Delivered", 1, "express", "Visa", "4242"),
    PastOrderSpec(datetime(2025, 3, 9, 19, 41), "Shipped", 3, "standard", "Mastercard", "5100"),
)
OTHER_USER_ORDERS: tuple[PastOrderSpec, ...] = (
    PastOrderSpec(datetime(2025, 2, 2, 11, 30), "Delivered", 2, "standard", "American Express", "0005"),
)
