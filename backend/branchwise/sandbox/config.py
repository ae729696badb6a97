"""Configuration for one sandbox shop instance."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_SEED = 2024


class SandboxConfig(BaseModel):
    """What every sandbox site's config holds; each site's config adds its own fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    db_path: Path
    seed: int = DEFAULT_SEED
    host: str = "127.0.0.1"
    # 0 asks the OS for a free port; the site's server reports the real one in `base_url`.
    port: int = Field(default=0, ge=0, le=65535)
    # Fresh state per run: an existing database file is replaced by a newly seeded one.
    reset: bool = True


class ShopConfig(SandboxConfig):
    """Everything a shop instance needs; the app reads nothing from the environment."""

    page_size: int = Field(default=12, ge=1, le=100)
    store_name: str = "Branchwise Market"
