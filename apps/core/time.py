"""Time helpers with no domain knowledge: IANA timezone validation (real zone names only)."""

from __future__ import annotations

from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from django.core.exceptions import ValidationError

# Files in a zoneinfo directory that are not places: "localtime" is a link to the host's
# own zone (so its meaning changes with the machine), "Factory" is IANA's placeholder for
# devices nobody configured, "posixrules" the template for POSIX TZ strings.
_NOT_PLACES = frozenset({"localtime", "Factory", "posixrules"})


@lru_cache(maxsize=1)
def _known_zones() -> frozenset[str]:
    return frozenset(available_timezones()) - _NOT_PLACES


def is_valid_timezone(name: str) -> bool:
    return name in _known_zones()


def validate_timezone(name: str) -> None:
    """Model/form validator: an IANA zone name such as ``Europe/Lisbon``."""
    if name and not is_valid_timezone(name):
        raise ValidationError(f"{name!r} is not an IANA timezone (for example Europe/Lisbon).", code="invalid_timezone")


def zone(name: str) -> ZoneInfo:
    validate_timezone(name)
    return ZoneInfo(name)
