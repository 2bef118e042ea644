"""Time helpers with no domain knowledge: IANA timezone validation."""

from __future__ import annotations

from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from django.core.exceptions import ValidationError


@lru_cache(maxsize=1)
def _known_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def is_valid_timezone(name: str) -> bool:
    return name in _known_zones()


def validate_timezone(name: str) -> None:
    """Model/form validator: an IANA zone name such as ``Europe/Lisbon``."""
    if name and not is_valid_timezone(name):
        raise ValidationError(f"{name!r} is not an IANA timezone (for example Europe/Lisbon).", code="invalid_timezone")


def zone(name: str) -> ZoneInfo:
    validate_timezone(name)
    return ZoneInfo(name)
