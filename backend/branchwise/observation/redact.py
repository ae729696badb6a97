"""Which field values must never reach the model, the logs or the store: passwords and payment-card data.

The AX tree carries no `type` or `autocomplete` attribute, so detection works from what it does carry:
- a value made only of bullets: Chromium's own masking of `<input type=password>` (its length still leaks, hence the
  fixed mask);
- a field name that says password or card data, in several languages;
- a value of 13-19 digits (spaces and dashes allowed) that passes the Luhn check: a card number in any field.
Fields the page marks only by `autocomplete="cc-*"` under a neutral label need that attribute from the DOM: the
caller passes such elements in `extra` (see process()).
"""

from __future__ import annotations

import re

from branchwise.observation.tree import RawNode

_MASKED = re.compile(r"^[•●*]+$")
_PASSWORD_NAME = re.compile(
    r"passw|passcode|passphrase|\bpin\b|mot de passe|contrase[ñn]a|senha|wachtwoord|has[łl]o|пароль|密码|パスワード",
    re.IGNORECASE,
)
_CARD_NAME = re.compile(
    r"card ?(number|no\b|num)|credit ?card|debit ?card|\bcc[- _]?(num|no\b|number)|\bcvc|\bcvv|\bcsc\b|security code"
    r"|card code|card verification|expir|\bexp(\.|iry)? ?date|\bmm ?/ ?yy|kartennummer|karteninhaber|prüfnummer"
    r"|numéro de (la )?carte|cryptogramme|número de (la )?tarjeta|numero della carta|kaartnummer",
    re.IGNORECASE,
)
_CARD_VALUE = re.compile(r"^\d[\d -]{11,}\d$")


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = ord(char) - 48
        if position % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


def looks_like_card_number(value: str) -> bool:
    if not _CARD_VALUE.match(value):
        return False
    digits = value.replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and luhn_valid(digits)


def is_sensitive_field(node: RawNode) -> bool:
    """True for a password or payment-card field, filled or not: what is typed into it is a secret."""
    return bool(
        _PASSWORD_NAME.search(node.name)
        or _CARD_NAME.search(node.name)
        or (node.value and (_MASKED.match(node.value) or looks_like_card_number(node.value)))
    )
