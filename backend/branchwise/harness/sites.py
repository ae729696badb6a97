"""WebArena's site placeholders (`__SHOPPING__`, `__REDDIT__`, `__GITLAB__`, …) and the base URLs they stand for."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PLACEHOLDER = re.compile(r"__([A-Z][A-Z_]*[A-Z])__")
# Not sites: WebArena's evaluator fills these in itself.
_EVALUATOR_TOKENS = frozenset({"LAST_URL", "PAGE"})


class UnknownSite(ValueError):
    pass


@dataclass(frozen=True)
class SiteUrls:
    """Placeholder name (SHOPPING) -> base URL without a trailing slash."""

    bases: Mapping[str, str]

    @classmethod
    def parse(cls, pairs: Iterable[str]) -> SiteUrls:
        """`NAME=URL` pairs, as given with --site (names case-insensitive: shopping=… is __SHOPPING__)."""
        bases: dict[str, str] = {}
        for pair in pairs:
            name, sep, url = pair.partition("=")
            if not sep or not name.strip() or not url.strip():
                raise UnknownSite(f"expected NAME=URL, got {pair!r}")
            bases[name.strip().upper()] = url.strip().rstrip("/")
        return cls(bases)

    def resolve(self, text: str) -> str:
        """`text` with every site placeholder replaced; an unknown one is an error naming it."""
        def base(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in _EVALUATOR_TOKENS:
                return match.group(0)
            if name not in self.bases:
                known = ", ".join(sorted(self.bases)) or "none"
                raise UnknownSite(f"no base URL for __{name}__ (known: {known}); "
                                  f"give it with --site {name.lower()}=URL")
            return self.bases[name]

        return PLACEHOLDER.sub(base, text)

    def placeholders(self, text: str) -> set[str]:
        return {m for m in PLACEHOLDER.findall(text) if m not in _EVALUATOR_TOKENS}
