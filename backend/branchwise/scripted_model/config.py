"""How the scripted model server behaves, apart from what it answers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ServerConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port")
    model_name: str = "scripted"
    # Behave like llama.cpp's server, which rejects n > 1, so clients' fallback to parallel requests can be tested.
    refuse_n: bool = False
    # Behave like servers that silently ignore n and always return one choice.
    ignore_n: bool = False
    # Behave like servers that refuse fields they do not know, as vLLM before 0.4.3 refused `stream_options`.
    refuse_stream_options: bool = False
    # Behave like llama.cpp's server with this context: /props and /tokenize (tokens = characters / 4) answer, a
    # prompt longer than the context is refused with HTTP 400 as llama.cpp does, and the usage says how much of the
    # prompt its one slot's cache held (the start it shares with the previous prompt). None: an OpenAI-like server.
    context_tokens: int | None = Field(default=None, ge=1)
    # llama.cpp's `total_slots` in /props: the requests it decodes at once.
    slots: int = Field(default=1, ge=1)
    # When set, requests must carry `Authorization: Bearer <api_key>`, else HTTP 401.
    api_key: str | None = None
    # HTTP statuses for the first requests, one each, before normal answers resume.
    fail_statuses: list[int] = []
    startup_timeout_s: float = 10.0

    @field_validator("fail_statuses")
    @classmethod
    def _are_http_errors(cls, statuses: list[int]) -> list[int]:
        if any(not 400 <= status <= 599 for status in statuses):
            raise ValueError("fail_statuses must be HTTP error statuses (400-599)")
        return statuses
