"""Configuration for one sandbox project tracker instance."""

from __future__ import annotations

from pydantic import Field

from ..config import DEFAULT_SEED, SandboxConfig

__all__ = ["DEFAULT_SEED", "TrackerConfig"]


class TrackerConfig(SandboxConfig):
    """Everything a tracker instance needs (db_path, seed, host, port, reset as for the shop); nothing is read from
    the environment."""

    # GitLab shows 20 issues or projects per page.
    page_size: int = Field(default=20, ge=1, le=100)
    site_name: str = "Branchwise GitLab"
