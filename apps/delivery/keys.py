"""Delivery keys that name an address: stable, and always inside the key column.

A delivery key is what makes enqueueing idempotent (``ON CONFLICT (project, delivery_key)
DO NOTHING``), so the same origin and address must always give the same key. Push tokens
(up to 4,096 characters) and webhook URLs do not fit the 255-character column: such an
address is stood in for by its SHA-256. Keys that fit stay as they were, so rows written
before this rule existed still match when their origin runs again.
"""

from __future__ import annotations

import hashlib

MAX_KEY = 255


def delivery_key(prefix: str, address: str) -> str:
    """``{prefix}:{address}``, or ``{prefix}:sha256:{hex}`` when that would not fit."""
    key = f"{prefix}:{address}"
    if len(key) <= MAX_KEY:
        return key
    return f"{prefix}:sha256:{hashlib.sha256(address.encode()).hexdigest()}"
