"""Row ids that arrive as text (paths, form fields, provider metadata)."""

from __future__ import annotations

_MAX_BIGINT = 2**63 - 1


def parse_id(value: object) -> int | None:
    """``value`` as a positive row id, or ``None`` when it cannot be one.

    ``str.isdigit`` is true for "²" and "٣", which ``int`` then refuses or reads as 3: only
    ASCII digits name a row, and only within PostgreSQL's bigint.
    """
    text = str(value)
    if not (text.isascii() and text.isdigit()):
        return None
    number = int(text)
    return number if 0 < number <= _MAX_BIGINT else None
