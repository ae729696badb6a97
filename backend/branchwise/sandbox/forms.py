"""Reads url-encoded form posts without python-multipart (not a dependency): the shop's forms never upload files."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

from fastapi import Request

# Generous for a checkout form, small enough that nobody can post megabytes at the shop.
MAX_FORM_BYTES = 64 * 1024


@dataclass(frozen=True)
class FormData:
    fields: tuple[tuple[str, str], ...]

    def text(self, name: str, default: str = "") -> str:
        """The first value posted under `name`."""
        return next((value for key, value in self.fields if key == name), default)

    def integer(self, name: str, default: int | None = None) -> int | None:
        try:
            return int(self.text(name).strip())
        except ValueError:
            return default


async def read_form(request: Request) -> FormData:
    """FastAPI dependency: the posted form, or an empty one for anything that is not url-encoded."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await request.body()
    if content_type != "application/x-www-form-urlencoded" or len(body) > MAX_FORM_BYTES:
        return FormData(())
    return FormData(tuple(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True)))
