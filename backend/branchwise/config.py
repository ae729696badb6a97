"""Configuration objects passed explicitly to every component (no module-level state)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from .protocol import PROTOCOL_VERSION
from .settings import default_data_dir

# The extension's id follows from the public `key` pinned in extension/manifest.json.
EXTENSION_ID = "hbbmfjggpedpjmmnhcocjbfbdeeogeaa"
DEFAULT_PORT = 8765


class ServerConfig(BaseModel):
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    data_dir: Path = Field(default_factory=default_data_dir)
    extension_id: str = EXTENSION_ID
    # A big page's raw AX tree is ~9 MB (docs/platform.md); leave room, but refuse anything absurd.
    max_message_bytes: int = 32 * 1024 * 1024
    # Hard transport cap (the websocket library drops the connection above it); the app limit above answers politely.
    transport_max_bytes: int = 48 * 1024 * 1024
    # The MV3 worker is killed ~30 s after the last data message (docs/platform.md); ping well inside that.
    keepalive_seconds: float = 15.0
    request_timeout_seconds: float = 30.0
    # A connection that has not sent a whole HTTP request head by then is closed (a half-sent request held its file
    # descriptor forever).
    request_head_timeout_seconds: float = Field(default=10.0, gt=0)
    # The version this backend speaks; only tests set another, to see how a mismatched extension is refused.
    protocol_version: int = PROTOCOL_VERSION

    @property
    def extension_origin(self) -> str:
        return f"chrome-extension://{self.extension_id}"
