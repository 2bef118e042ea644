"""Read configuration from the environment, with safe local defaults.

Every setting that differs between a laptop, CI and production comes through here,
so ``config/settings/*`` never reads ``os.environ`` directly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class EnvError(ValueError):
    """A variable is present but cannot be understood."""


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise EnvError(f"{name} must be an integer, got {raw!r}") from exc


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_json(name: str, default: dict | None = None) -> dict:
    """A JSON object, for settings that are a small mapping (a provider's credentials)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return dict(default or {})
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise EnvError(f"{name} must be a JSON object, got invalid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise EnvError(f"{name} must be a JSON object, got {type(value).__name__}")
    return value


def data_dir() -> Path:
    """Where the embedded servers (``make run``), uploads and collected static files live."""
    path = Path(env_str("TIDINGS_DATA_DIR", str(BASE_DIR / ".data")))
    path.mkdir(parents=True, exist_ok=True)
    return path
