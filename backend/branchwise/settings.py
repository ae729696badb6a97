"""Branchwise's settings: read once, here, from the environment and an optional file in the data directory.

Everything else receives them as objects. Command-line flags win over the environment, the environment over the file
(`<data dir>/config.toml`, keys named as the fields below), the file over the defaults.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

log = logging.getLogger(__name__)

CONFIG_FILE = "config.toml"
# Each setting's environment variable; comma-separated for the site lists.
ENV_VARS: dict[str, str] = {
    "base_url": "OPENAI_BASE_URL",
    "api_key": "OPENAI_API_KEY",
    "model": "BRANCHWISE_MODEL",
    "value_model": "BRANCHWISE_VALUE_MODEL",
    "reward_model": "BRANCHWISE_REWARD_MODEL",
    "allow_sites": "BRANCHWISE_ALLOW_SITES",
    "block_sites": "BRANCHWISE_BLOCK_SITES",
    "confirm_timeout_s": "BRANCHWISE_CONFIRM_TIMEOUT",
    "chromium": "BRANCHWISE_CHROMIUM",
    "context_tokens": "BRANCHWISE_CONTEXT_TOKENS",
}
_LISTS = ("allow_sites", "block_sites")


class SettingsError(ValueError):
    """A setting that cannot be used, with where it came from; shown to the user as it is."""


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    data_dir: Path
    # The model endpoint; None: not configured (the demo then uses its scripted model).
    base_url: str | None = None
    api_key: SecretStr = SecretStr("")
    model: str | None = None
    # Other models for judging, on the same endpoint; None: the policy's model.
    value_model: str | None = None
    reward_model: str | None = None
    allow_sites: tuple[str, ...] = ()
    block_sites: tuple[str, ...] = ()
    confirm_timeout_s: float | None = Field(default=None, gt=0)
    # A Chromium binary to launch instead of the one on PATH.
    chromium: str | None = None
    # The model's context in tokens, when its server does not say or says wrong (--context-tokens); None: ask it.
    context_tokens: int | None = Field(default=None, ge=512)
    # A display to show a launched browser on (else it runs headless).
    display: bool = False

    @property
    def model_configured(self) -> bool:
        return bool(self.base_url or self.model)

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, *, data_dir: Path | None = None) -> Settings:
        """The settings in force: `environ` (default: this process's environment), the file in the data directory
        (`data_dir`, e.g. from --data-dir; else $XDG_DATA_HOME/branchwise or ~/.local/share/branchwise)."""
        env = os.environ if environ is None else environ
        folder = data_dir or default_data_dir(env)
        values: dict[str, Any] = _read_file(folder / CONFIG_FILE)
        for field, variable in ENV_VARS.items():
            raw = env.get(variable)
            if raw:
                values[field] = split_list(raw) if field in _LISTS else raw
        values["data_dir"] = folder
        values["display"] = bool(env.get("DISPLAY"))
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(f"{_source(str(e['loc'][0]))}: {e['msg']}" for e in exc.errors())
            raise SettingsError(f"invalid settings ({problems})") from None


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "branchwise"


def split_list(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


def _source(field: str) -> str:
    variable = ENV_VARS.get(field)
    return f"{field} (${variable} or {CONFIG_FILE})" if variable else field


def _read_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    unknown = sorted(set(data) - set(ENV_VARS))
    if unknown:
        raise SettingsError(f"{path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(ENV_VARS)}")
    log.info("settings from %s: %s", path, ", ".join(sorted(data)))
    return {k: tuple(v) if k in _LISTS and isinstance(v, list) else v for k, v in data.items()}
