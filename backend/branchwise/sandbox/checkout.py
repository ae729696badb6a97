"""The checkout form: its fields, server-side validation and the card checks a real shop would make."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from .countries import is_known_country
from .pricing import ShippingMethod, shipping_method

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_US_ZIP = re.compile(r"^\d{5}(-\d{4})?$")
_POSTAL_CODE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 \-]{1,9}$")
_EXPIRY = re.compile(r"^(\d{1,2})\s*/\s*(\d{2}|\d{4})$")


@dataclass(frozen=True)
class CheckoutForm:
    """Exactly what the shopper typed, so a rejected form can be shown again."""

    full_name: str = ""
    email: str = ""
    address: str = ""
    city: str = ""
    zip_code: str = ""
    country: str = "US"
    shipping_method: str = "standard"
    card_number: str = ""
    card_expiry: str = ""
    card_cvc: str = ""

    def without_card_data(self) -> CheckoutForm:
        """Card details are never echoed back into a page."""
        return replace(self, card_number="", card_expiry="", card_cvc="")


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str


@dataclass(frozen=True)
class PaymentCard:
    brand: str
    last4: str


@dataclass(frozen=True)
class OrderRequest:
    """A validated checkout, ready to become an order."""

    full_name: str
    email: str
    address: str
    city: str
    zip_code: str
    country: str
    shipping: ShippingMethod
    card: PaymentCard


@dataclass(frozen=True)
class CheckoutResult:
    request: OrderRequest | None
    errors: tuple[FieldError, ...]

    def error_for(self, field: str) -> str | None:
        return next((error.message for error in self.errors if error.field == field), None)


def validate_checkout(form: CheckoutForm, today: date) -> CheckoutResult:
    errors: list[FieldError] = []

    def require(field: str, value: str, message: str) -> str:
        cleaned = " ".join(value.split())
        if not cleaned:
            errors.append(FieldError(field, message))
        return cleaned

    full_name = require("full_name", form.full_name, "Enter your full name.")
    email = form.email.strip()
    if not _EMAIL.match(email):
        errors.append(FieldError("email", "Enter a valid email address, like name@example.com."))
    address = require("address", form.address, "Enter your street address.")
    city = require("city", form.city, "Enter your town or city.")
    country = form.country.strip()
    if not is_known_country(country):
        errors.append(FieldError("country", "Choose a country from the list."))
    zip_code = form.zip_code.strip()
    if country == "US" and not _US_ZIP.match(zip_code):
        errors.append(FieldError("zip_code", "Enter a 5-digit ZIP code, like 97205."))
    elif country != "US" and not _POSTAL_CODE.match(zip_code):
        errors.append(FieldError("zip_code", "Enter a valid postal code."))
    method = shipping_method(form.shipping_method)
    if method is None:
        errors.append(FieldError("shipping_method", "Choose a shipping method."))
    card = _validate_card(form, today, errors)

    if errors or method is None or card is None:
        return CheckoutResult(None, tuple(errors))
    request = OrderRequest(full_name, email, address, city, zip_code.upper(), country, method, card)
    return CheckoutResult(request, ())


def _validate_card(form: CheckoutForm, today: date, errors: list[FieldError]) -> PaymentCard | None:
    digits = re.sub(r"[\s-]", "", form.card_number)
    brand = card_brand(digits)
    valid = True
    if not digits:
        errors.append(FieldError("card_number", "Enter your card number."))
        valid = False
    elif not digits.isdigit() or not 13 <= len(digits) <= 19 or not luhn_valid(digits):
        errors.append(FieldError("card_number", "That card number is not valid. Check the digits and try again."))
        valid = False

    expiry = _EXPIRY.match(form.card_expiry.strip())
    if expiry is None or not 1 <= int(expiry.group(1)) <= 12:
        errors.append(FieldError("card_expiry", "Enter the expiry date as MM/YY, like 08/27."))
        valid = False
    else:
        month, year = int(expiry.group(1)), int(expiry.group(2))
        year = year + 2000 if year < 100 else year
        if (year, month) < (today.year, today.month):
            errors.append(FieldError("card_expiry", "This card has expired. Use a different card."))
            valid = False

    cvc_length = 4 if brand == "American Express" else 3
    if not (form.card_cvc.strip().isdigit() and len(form.card_cvc.strip()) == cvc_length):
        errors.append(FieldError("card_cvc", f"Enter the {cvc_length}-digit security code from your card."))
        valid = False
    return PaymentCard(brand, digits[-4:]) if valid else None


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def card_brand(digits: str) -> str:
    if digits.startswith("4"):
        return "Visa"
    if digits[:2] in {"34", "37"}:
        return "American Express"
    if digits[:2] in {"51", "52", "53", "54", "55"} or "2221" <= digits[:4] <= "2720":
        return "Mastercard"
    if digits.startswith(("6011", "65")):
        return "Discover"
    return "Card"
