"""Raw API key format: a readable type prefix and 32 random bytes; only a hash is kept."""

from __future__ import annotations

import hashlib
import re
import secrets

KEY_PATTERN = re.compile(r"^(pk|sk|rk)_[A-Za-z0-9_-]{43}$")
RANDOM_BYTES = 32


def generate_raw_key(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(RANDOM_BYTES)


def hash_key(raw: str) -> str:
    # Keys carry 256 random bits, so a fast hash is enough: nothing to brute-force.
    return hashlib.sha256(raw.encode()).hexdigest()


def looks_like_key(raw: str) -> bool:
    return bool(KEY_PATTERN.match(raw))
