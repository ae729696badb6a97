"""The user's site allow and block lists: which hosts the agent may read and act on.

A pattern is a host (`shop.example`: that host only) or `*.` and a domain (`*.bank.example`: the domain itself and
every host under it). A pasted address (`https://shop.example/cart`) counts as its host. The block list wins over the
allow list; an empty allow list allows every host that is not blocked. Addresses without a host (`about:blank`) are
no site and pass. The extension applies the same rules to its own lists (extension/lib/sites.js): it is the boundary
that holds even if the backend is wrong, and the backend's check keeps refused addresses out of the plan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import idna

# A hostname label: letters, digits, hyphens (punycode included); IPv4 addresses pass as four numeric labels.
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


class SitePatternError(ValueError):
    """A list entry that names no host; the message says which and why."""


# Schemes whose addresses the browser parses as "special" (WHATWG URL): a backslash ends the host there as a slash does.
_SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})


def _idna(host: str) -> str:
    # UTS 46 without transitional mapping, as Chrome writes hosts: straße.example is xn--strae-oqa.example, not
    # strasse.example (Python's own "idna" codec is IDNA 2003 and would name another host than the one visited).
    try:
        return idna.encode(host, uts46=True, transitional=False).decode("ascii")
    except idna.IDNAError as exc:
        raise SitePatternError(f"{host!r} is not a valid host name") from exc


def host_of(url: str) -> str:
    """The lower-case host of an address as the browser reads it (punycode, no port, no trailing dot); "" when it has
    none. Raises SitePatternError for a host that cannot be written in punycode."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() == "blob":  # blob:https://site/uuid belongs to the site that made it
        parts = urlsplit(parts.path)
    if parts.scheme.lower() in _SPECIAL_SCHEMES:
        # https://blocked.example\@allowed.example/ goes to blocked.example, whatever urlsplit makes of it.
        parts = urlsplit(parts.geturl().replace("\\", "/"))
    # The browser decodes a percent-encoded host (blocked%2Eexample is blocked.example). lower(), not casefold():
    # casefold turns ß into ss, another host.
    host = unquote(parts.hostname or "").lower().rstrip(".")
    if not host:
        return ""
    return host if host.isascii() else _idna(host)


@dataclass(frozen=True, slots=True)
class SitePattern:
    domain: str
    subdomains: bool

    @classmethod
    def parse(cls, text: str) -> SitePattern:
        raw = text.strip().lower()
        subdomains = raw.startswith("*.")
        host = raw[2:] if subdomains else raw
        # Read as an address, as extension/lib/sites.js does: a pasted address counts as its host (a port is no part
        # of a site), and the host is written as the browser writes it.
        host = host_of(host if "://" in host else f"http://{host}")
        if not host:
            raise SitePatternError(f"{text.strip()!r} names no host (write shop.example or *.shop.example)")
        if not all(_LABEL.match(label) for label in host.split(".")):
            raise SitePatternError(f"{text.strip()!r} is not a host name (write shop.example or *.shop.example)")
        return cls(host, subdomains)

    def matches(self, host: str) -> bool:
        return host == self.domain or (self.subdomains and host.endswith("." + self.domain))

    def __str__(self) -> str:
        return f"*.{self.domain}" if self.subdomains else self.domain


def parse_patterns(entries: Iterable[str]) -> tuple[SitePattern, ...]:
    """Patterns from list entries; blank entries and `#` comments are skipped, duplicates dropped."""
    patterns: dict[SitePattern, None] = {}
    for entry in entries:
        text = entry.split("#", 1)[0].strip()
        if text:
            patterns.setdefault(SitePattern.parse(text))
    return tuple(patterns)


def split_list(text: str) -> list[str]:
    """Entries of an environment variable: separated by commas (or whitespace)."""
    return [part for part in re.split(r"[,\s]+", text) if part]


@dataclass(frozen=True, slots=True)
class SiteRules:
    """The default allows every site."""

    allow: tuple[SitePattern, ...] = ()
    block: tuple[SitePattern, ...] = ()
    # How refusals name the lists, so the user knows which setting to change.
    source: str = "the backend's"

    @classmethod
    def parse(cls, allow: Iterable[str] = (), block: Iterable[str] = (), source: str = "the backend's") -> SiteRules:
        return cls(parse_patterns(allow), parse_patterns(block), source)

    @property
    def empty(self) -> bool:
        return not (self.allow or self.block)

    def refusal(self, url: str) -> str | None:
        """None when the agent may work on `url`, else why not, naming the host and the list (fit for the model and
        the user alike)."""
        if self.empty:
            return None
        try:
            host = host_of(url)
        except SitePatternError:  # fail safe: a host nobody can name is on no allow list and may be on a block list
            return f"the host of {url} is not a valid host name: Branchwise does not go there"
        if not host:
            return None
        blocked = next((p for p in self.block if p.matches(host)), None)
        if blocked is not None:
            return f"{host} is on {self.source} block list ({blocked}): Branchwise does not work there"
        if self.allow and not any(p.matches(host) for p in self.allow):
            listed = ", ".join(str(p) for p in self.allow)
            return f"{host} is not on {self.source} allow list ({listed}): Branchwise does not work there"
        return None

    def describe(self) -> str:
        parts = []
        if self.allow:
            parts.append("allowed: " + ", ".join(str(p) for p in self.allow))
        if self.block:
            parts.append("blocked: " + ", ".join(str(p) for p in self.block))
        return "; ".join(parts) or "every site"


class SiteRefused(RuntimeError):
    """The page the agent works on is on a site the user's lists keep it out of: the run stops with this reason."""
