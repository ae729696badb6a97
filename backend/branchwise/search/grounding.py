"""An answer gives only numbers the run has seen: a price, a count or a total in a `stop` answer must be on a page
on the way to it. On the real run at 887dbd2 (BENCHMARKS.md) best_first and action_aware made up 7 of their stop
proposals' numbers ("$499.95" for a product the shop does not sell, "23" subscribers) and every one was wrong, while
every right numeric answer proposed was on a page on its path. A number the model worked out itself (a count of the
rows it read) is not on the page either: proposed again after the refusal, it is taken.
"""

from __future__ import annotations

import re

# The element ids of the observation ("[123] link ...") are not the page's numbers.
_ELEMENT_ID = re.compile(r"^(\s*)\[\d+\]", re.M)
# A number is a whole word: "silver_maple73" holds none.
_WORD = re.compile(r"\d+(?:[.,]\d+)*|\w+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# The tab line and the URL's host and port are the browser's, not the page's ("0", "7770").
_URL_HOST = re.compile(r"^URL: \w+://[^/]*")


def canonical_number(number: str) -> str:
    """1,345 and 1345 are one number, as are 1,000.50 and 1000.5, 200.00 and 200, and 05 and 5."""
    if _THOUSANDS.fullmatch(number):
        number = number.replace(",", "")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    elif number.isdigit():
        number = number.lstrip("0") or "0"
    return number


def numbers_in(text: str) -> frozenset[str]:
    """The numbers the text shows (a word starting with digits gives them: "3rd" gives 3, "Q3" none), the
    observation's element ids, tab line and URL host left out."""
    lines = [_URL_HOST.sub("URL: ", line) for line in text.splitlines() if not line.startswith("Tab ")]
    words = _WORD.findall(_ELEMENT_ID.sub(r"\1", "\n".join(lines)))
    return frozenset(canonical_number(word) for word in words if _NUMBER.fullmatch(word))


def unseen_numbers(answer: str, seen: frozenset[str]) -> list[str]:
    """The answer's numbers that are not among those seen, in the answer's order."""
    unseen: list[str] = []
    for word in _WORD.findall(answer):
        if _NUMBER.fullmatch(word) and canonical_number(word) not in seen and word not in unseen:
            unseen.append(word)
    return unseen
