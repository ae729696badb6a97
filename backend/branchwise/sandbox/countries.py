"""Countries the shop ships to (ISO 3166 alpha-2 codes)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Country:
    code: str
    name: str


COUNTRIES: tuple[Country, ...] = (
    Country("US", "United States"),
    Country("CA", "Canada"),
    Country("MX", "Mexico"),
    Country("GB", "United Kingdom"),
    Country("IE", "Ireland"),
    Country("FR", "France"),
    Country("DE", "Germany"),
    Country("ES", "Spain"),
    Country("IT", "Italy"),
    Country("NL", "Netherlands"),
    Country("SE", "Sweden"),
    Country("AU", "Australia"),
    Country("NZ", "New Zealand"),
    Country("JP", "Japan"),
)


def country_name(code: str) -> str:
    return next((country.name for country in COUNTRIES if country.code == code), code)


def is_known_country(code: str) -> bool:
    return any(country.code == code for country in COUNTRIES)
