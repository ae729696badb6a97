"""Secrets the agent types: password and payment-card values never reach the model, the logs or the store.

Page values are masked when the page is read (observation/redact.py). What is left is what the agent itself types:
`type [12] [hunter2] [1]` would otherwise sit in the history the model reads, in log lines, progress messages, the
run store and `--json`. One place decides, as each proposed action is read from the model (`SecretKeeper.seal`): a
`type` into a sensitive field (ElementInfo.sensitive: a password or payment-card field, filled or not) or of text that
holds a Luhn-valid card number is marked secret, and its `to_text()` shows `[••••••]` everywhere; only the command
sent to the extension carries the real text. The keeper remembers the run's secrets and scrubs them, and any card
number, from the model's thoughts and answers too. A task's card numbers and the passwords it names ("password
hunter2", "PIN: 4821") are masked before it is stored or shown (`mask_task`), and the keeper scrubs those passwords
from what the model writes; the model still gets the task as the user wrote it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from ..actions import SECRET_MASK, Action, Stop, Type
from ..observation import PageView
from ..observation.redact import luhn_valid

# 13 to 19 digits, single spaces or dashes allowed between them (4111 1111 1111 1111, 4111-1111-1111-1111).
_DIGIT_RUN = re.compile(r"(?<!\d)\d(?:[ -]?\d){12,}(?!\d)")
_SEPARATOR = re.compile(r"[ -]")
# Shorter secrets are too likely to be parts of ordinary words or numbers ("ab1" in "cab12"): they are scrubbed as
# whole words only.
MIN_SUBSTRING_CHARS = 4

# A password named in a task: the cue word (en, de, fr, es, pt), then "is", "to", ":" or "=", then the value, quoted or
# up to the next blank. Without a separator ("password hunter2") only a value with a digit or a sign counts, so
# "password field" and "password policy" stay words.
_CUE = r"(?:password|passwort|kennwort|passcode|passphrase|pin(?: code)?|mot de passe|contraseña|senha)"
_NAMED_SECRET = re.compile(
    rf"(?i)\b{_CUE}\b(?P<sep>\s*(?:[:=]|\b(?:is|ist|est|es|é|to|auf)\b:?)\s*|\s+)"
    r"(?:\"(?P<dq>[^\"]+)\"|'(?P<sq>[^']+)'|“(?P<cq>[^”]+)”|(?P<bare>\S+))")
_TRAILING = ".,;:)"
_NOT_SECRETS = frozenset({"the", "a", "an", "my", "your", "field", "box", "page", "and", "or", "in", "on", "for",
                          "with"})


def _card_spans(text: str) -> list[tuple[int, int]]:
    """Where card numbers are in `text`: maximal digit runs, or their longest leading groups, that pass Luhn."""
    spans = []
    for match in _DIGIT_RUN.finditer(text):
        run = match.group()
        # A card number followed by more digits ("4111 1111 1111 1111 12"): try the run, then shorter group prefixes.
        ends = [len(run)] + [m.start() for m in reversed(list(_SEPARATOR.finditer(run)))]
        for end in ends:
            digits = _SEPARATOR.sub("", run[:end])
            if 13 <= len(digits) <= 19 and luhn_valid(digits):
                spans.append((match.start(), match.start() + end))
                break
    return spans


def contains_card_number(text: str) -> bool:
    return bool(_card_spans(text))


def mask_card_numbers(text: str) -> str:
    """`text` with every Luhn-valid card number replaced by the mask."""
    for start, end in reversed(_card_spans(text)):
        text = text[:start] + SECRET_MASK + text[end:]
    return text


def task_secrets(text: str) -> list[str]:
    """The passwords and PINs a task names ("log in with password hunter2", 'PIN: "4821"'), in order."""
    found = []
    for match in _NAMED_SECRET.finditer(text):
        quoted = match["dq"] or match["sq"] or match["cq"]
        if quoted:
            found.append(quoted)
            continue
        value = match["bare"]
        if len(value) > 1 and value[-1] in _TRAILING:
            value = value[:-1]
        separated = bool(match["sep"].strip())
        if value.casefold() in _NOT_SECRETS or not (separated or re.search(r"[\d\W_]", value)):
            continue
        found.append(value)
    return found


def mask_task(text: str) -> str:
    """`text` as it may be stored and shown: card numbers and the passwords it names replaced by the mask."""
    return SecretKeeper(task_secrets(text)).scrub(text)


def types_secret(action: Action, page: PageView | None) -> bool:
    """True for a `type` whose text is a secret: into a password or payment-card field, or holding a card number."""
    if not isinstance(action, Type):
        return False
    element = page.elements.get(action.element_id) if page is not None else None
    return (element is not None and element.sensitive) or contains_card_number(action.text)


class SecretKeeper:
    """One run's secrets: decides which proposed actions type one, and scrubs the ones seen from later text."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        """`known`: secrets the run starts with (the passwords the task names)."""
        self._known: set[str] = {secret for secret in known if secret.strip()}

    @property
    def count(self) -> int:
        """How many secrets the keeper knows: it only grows, so a change means text written before may hold one."""
        return len(self._known)

    def seal(self, action: Action, thought: str, page: PageView | None) -> tuple[Action, str]:
        """The action as it may be shown (a typed secret marked, a stop's answer scrubbed) and the thought scrubbed.
        `page` is the page the action was proposed on."""
        if types_secret(action, page):
            assert isinstance(action, Type)
            action = dataclasses.replace(action, secret=True)
            text = action.text.strip()
            if text:
                self._known.add(text)
        elif isinstance(action, Stop) and action.answer:
            action = dataclasses.replace(action, answer=self.scrub(action.answer))
        return action, self.scrub(thought)

    def scrub(self, text: str) -> str:
        """`text` without the run's known secrets and without card numbers."""
        for secret in sorted(self._known, key=len, reverse=True):  # longest first: one may contain another
            if len(secret) >= MIN_SUBSTRING_CHARS:
                text = text.replace(secret, SECRET_MASK)
            else:
                text = re.sub(rf"(?<!\w){re.escape(secret)}(?!\w)", SECRET_MASK, text)
        return mask_card_numbers(text)
