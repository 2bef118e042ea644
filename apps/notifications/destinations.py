"""Recipients of a notification: subscriber external ids or raw destinations.

A string is always a subscriber's external id (people use e-mail addresses as external
ids, so guessing would be wrong). A raw destination is an object with one key naming
its kind: ``{"email": ...}``, ``{"phone": ...}``, ``{"push_token": ...}``, ``{"url": ...}``.
``{"subscriber": ...}`` is the long form of a string.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email

E164 = re.compile(r"^\+[1-9]\d{6,14}$")
PUSH_TOKEN = re.compile(r"^[A-Za-z0-9_:\-.]{8,4096}$")
_URL = URLValidator(schemes=["http", "https"])

# Which channels a raw destination of each kind can receive.
KIND_CHANNELS: dict[str, frozenset[str]] = {
    "email": frozenset({"email"}),
    "phone": frozenset({"sms", "whatsapp"}),
    "push_token": frozenset({"push"}),
    "url": frozenset({"webhook", "slack", "teams"}),
}
RAW_KINDS = tuple(KIND_CHANNELS)
ALL_KINDS = ("subscriber", *RAW_KINDS)


class DestinationError(ValueError):
    def __init__(self, message: str, code: str = "invalid_destination") -> None:
        super().__init__(message)
        self.code = code


def is_valid_email(value: str) -> bool:
    try:
        validate_email(value)
    except ValidationError:
        return False
    return True


def check_raw(kind: str, value: str) -> str:
    """The normalised destination, or ``DestinationError`` saying why it cannot be one."""
    value = value.strip()
    if kind == "email":
        if not is_valid_email(value):
            raise DestinationError(f"{value!r} is not a valid e-mail address.")
        return value.lower() if value.isascii() else value
    if kind == "phone":
        if not E164.match(value):
            raise DestinationError(f"{value!r} is not an E.164 phone number (for example +351912345678).")
        return value
    if kind == "push_token":
        if not PUSH_TOKEN.match(value):
            raise DestinationError(f"{value[:40]!r} is not a push token.")
        return value
    if kind == "url":
        try:
            _URL(value)
        except ValidationError:
            raise DestinationError(f"{value!r} is not an http(s) URL.") from None
        return value
    raise DestinationError(f"Unknown destination kind {kind!r}; use one of {', '.join(ALL_KINDS)}.")


def parse_recipient(item: Any) -> dict[str, str]:
    """One ``to`` item as ``{kind: value}``; raises ``DestinationError``."""
    if isinstance(item, str):
        item = {"subscriber": item}
    if not isinstance(item, dict) or len(item) != 1:
        raise DestinationError(
            f"Each recipient is an external id or an object with one of: {', '.join(ALL_KINDS)}.",
            code="invalid_recipient",
        )
    ((kind, value),) = item.items()
    if kind not in ALL_KINDS:
        raise DestinationError(f"Unknown destination kind {kind!r}; use one of {', '.join(ALL_KINDS)}.")
    if not isinstance(value, str) or not value.strip():
        raise DestinationError(f"{kind} must be a non-empty string.")
    if kind == "subscriber":
        if len(value) > 255:
            raise DestinationError("An external id is at most 255 characters.")
        return {"subscriber": value}
    return {kind: check_raw(kind, value)}


def check_reaches(recipient: dict[str, str], channels: list[str]) -> None:
    """A raw destination must be usable on at least one requested channel."""
    ((kind, value),) = recipient.items()
    if kind == "subscriber":
        return
    if not KIND_CHANNELS[kind] & set(channels):
        wanted = " or ".join(sorted(KIND_CHANNELS[kind]))
        raise DestinationError(
            f"{value!r} is a {kind} destination; it needs channel {wanted}, not {', '.join(channels)}.",
            code="destination_channel_mismatch",
        )


def channel_destination_for_raw(recipient: dict[str, str], channel: str) -> str | None:
    ((kind, value),) = recipient.items()
    return value if kind != "subscriber" and channel in KIND_CHANNELS[kind] else None
