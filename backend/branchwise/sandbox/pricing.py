"""Money formatting and shipping charges. All amounts are integer cents."""

from __future__ import annotations

from dataclasses import dataclass


def format_price(cents: int) -> str:
    """12345 -> "$123.45"; thousands get separators so large totals stay readable."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


@dataclass(frozen=True)
class ShippingMethod:
    code: str
    label: str
    price_cents: int
    # Standard shipping is free from this subtotal on; None means never free.
    free_from_cents: int | None

    def cost_for(self, subtotal_cents: int) -> int:
        if self.free_from_cents is not None and subtotal_cents >= self.free_from_cents:
            return 0
        return self.price_cents


STANDARD_SHIPPING = ShippingMethod("standard", "Standard shipping (3–5 business days)", 599, 5000)
EXPRESS_SHIPPING = ShippingMethod("express", "Express shipping (1–2 business days)", 1499, None)
SHIPPING_METHODS: tuple[ShippingMethod, ...] = (STANDARD_SHIPPING, EXPRESS_SHIPPING)


def shipping_method(code: str) -> ShippingMethod | None:
    return next((method for method in SHIPPING_METHODS if method.code == code), None)
