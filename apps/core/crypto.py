"""Secrets at rest (connector credentials): Fernet with rotation.

``TIDINGS_SECRET_KEYS`` lists keys newest first. Encryption always uses the first;
decryption tries each, so adding a key in front and re-encrypting rotates safely.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class SecretError(ValueError):
    pass


def _derived_local_key() -> bytes:
    # Without configured keys (local use only), derive one from SECRET_KEY so data
    # survives restarts; production settings refuse to start without real keys.
    digest = hashlib.sha256(("tidings-secrets:" + settings.SECRET_KEY).encode()).digest()
    return base64.urlsafe_b64encode(digest)


@lru_cache(maxsize=1)
def _fernet() -> MultiFernet:
    raw_keys = list(settings.TIDINGS_SECRET_KEYS) or [_derived_local_key().decode()]
    try:
        return MultiFernet([Fernet(key.encode() if isinstance(key, str) else key) for key in raw_keys])
    except (ValueError, TypeError) as exc:
        raise SecretError("TIDINGS_SECRET_KEYS must be url-safe base64 Fernet keys") from exc


def reset_keys_cache() -> None:
    _fernet.cache_clear()


def encrypt_text(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt_text(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretError("secret cannot be decrypted with the configured keys") from exc


def encrypt_json(value: Any) -> str:
    return encrypt_text(json.dumps(value, separators=(",", ":"), sort_keys=True))


def decrypt_json(token: str) -> Any:
    return json.loads(decrypt_text(token))


def rotate_token(token: str) -> str:
    """Re-encrypt ``token`` under the newest key."""
    try:
        return _fernet().rotate(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretError("secret cannot be decrypted with the configured keys") from exc


def last_characters(value: str, count: int = 4) -> str:
    return value[-count:] if len(value) > count else ""
