"""The script a scripted model answers from: ordered rules keyed on the prompt, loadable from a JSON file."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DEFAULT_FALLBACK = "No scripted answer matches this prompt."


class _Strict(BaseModel):
    # Typos in hand-written script files should fail loudly rather than silently never match.
    model_config = ConfigDict(extra="forbid", frozen=True)


class TopLogprob(_Strict):
    token: str
    logprob: float


class TokenLogprob(_Strict):
    token: str
    logprob: float
    top_logprobs: list[TopLogprob] = []


class Reply(_Strict):
    """One scripted answer. `logprobs` is sent only when the request asks for logprobs."""

    text: str
    logprobs: list[TokenLogprob] | None = None
    delay_s: float = Field(default=0.0, ge=0.0)
    # Streamed, the text's pieces are spread over this long after the delay: a slow model that keeps talking.
    stream_s: float = Field(default=0.0, ge=0.0)


class Rule(_Strict):
    """Matches when every condition holds; its replies are handed out in turn, one per choice."""

    name: str = ""
    when_contains: list[str] = []
    search_in: Literal["all", "last_user"] = "all"
    when_regex: str | None = None
    max_uses: int | None = Field(default=None, ge=1)
    replies: list[Reply] = Field(min_length=1)

    if TYPE_CHECKING:
        # What `_accept_shorthands` lets callers write, spelled out for type checkers: `reply=` for a single reply,
        # and plain strings for replies.
        def __init__(self, *, name: str = "", when_contains: list[str] = ...,
                     search_in: Literal["all", "last_user"] = "all", when_regex: str | None = None,
                     max_uses: int | None = None, replies: Sequence[Reply | str] = ..., reply: Reply | str = ...,
                     ) -> None: ...

    @model_validator(mode="before")
    @classmethod
    def _accept_shorthands(cls, data: Any) -> Any:
        # Script files may say `"reply": "text"` and list plain strings; both normalise to Reply objects.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "reply" in data:
            if "replies" in data:
                raise ValueError("give either 'reply' or 'replies', not both")
            data["replies"] = [data.pop("reply")]
        data["replies"] = [{"text": r} if isinstance(r, str) else r for r in data.get("replies", [])]
        return data

    @field_validator("when_regex")
    @classmethod
    def _regex_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {value!r}: {exc}") from exc
        return value

    def matches(self, all_text: str, last_user_text: str) -> bool:
        haystack = all_text if self.search_in == "all" else last_user_text
        if not all(needle in haystack for needle in self.when_contains):
            return False
        return self.when_regex is None or re.search(self.when_regex, haystack) is not None


class Script(_Strict):
    """Rules are tried in order; the first that matches (and has uses left) answers."""

    rules: list[Rule] = []
    fallback: str = DEFAULT_FALLBACK

    @classmethod
    def load(cls, path: str | Path) -> Script:
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2, exclude_defaults=True), encoding="utf-8")

    def rule_label(self, index: int) -> str:
        return self.rules[index].name or f"rule[{index}]"
