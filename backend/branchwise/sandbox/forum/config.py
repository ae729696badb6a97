"""Configuration for one sandbox forum instance."""

from __future__ import annotations

from pydantic import Field

from ..config import DEFAULT_SEED, SandboxConfig

__all__ = ["DEFAULT_SEED", "ForumConfig"]


class ForumConfig(SandboxConfig):
    """Everything a forum instance needs (db_path, seed, host, port, reset come from SandboxConfig)."""

    page_size: int = Field(default=25, ge=1, le=100)
    forums_page_size: int = Field(default=20, ge=1, le=100)
    site_name: str = "Branchwise Forum"
