"""Signed one-click unsubscribe links (RFC 8058).

The token carries project, campaign, channel and address, signed with Django's
TimestampSigner (secret key + a salt of our own) and time-stamped, so it cannot be forged, expires, and
cannot be replayed against another project's campaign.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from django.conf import settings
from django.core import signing
from django.utils.encoding import force_bytes

SALT = "tidings.campaigns.unsubscribe.v1"


class UnsubscribeTokenError(Exception):
    """The token is forged, expired or names something that does not exist."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class UnsubscribeClaim:
    project_id: int
    campaign_id: int
    channel: str
    address: str


def max_age_seconds() -> int:
    return int(getattr(settings, "TIDINGS_UNSUBSCRIBE_MAX_AGE", 180 * 86400))


class _CampaignSigner(signing.TimestampSigner):
    """Django's timestamp signer (same token format, same checks), with the HMAC key
    derived once instead of per call: a token is made for every campaign email."""

    @cached_property
    def _derived_key(self) -> bytes:
        return hashlib.sha256(force_bytes(self.salt + "signer") + force_bytes(self.key)).digest()

    def signature(self, value: str | bytes, key: str | bytes | None = None) -> str:
        if key is not None and key != self.key:
            return super().signature(value, key)
        return signing.b64_encode(hmac.new(self._derived_key, force_bytes(value), hashlib.sha256).digest()).decode()


@lru_cache(maxsize=1)
def _signer() -> _CampaignSigner:
    return _CampaignSigner(salt=SALT)


def unsubscribe_token(*, project_id: int, campaign_id: int, address: str, channel: str = "email") -> str:
    value = f"{project_id}:{campaign_id}:{channel}:{address}".encode()
    return _signer().sign(base64.urlsafe_b64encode(value).rstrip(b"=").decode())


def unsubscribe_token_read(token: str) -> UnsubscribeClaim:
    try:
        value = _signer().unsign(token, max_age=max_age_seconds())
    except signing.SignatureExpired:
        raise UnsubscribeTokenError("expired", "This unsubscribe link has expired.") from None
    except signing.BadSignature:
        raise UnsubscribeTokenError("invalid", "This unsubscribe link is not valid.") from None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
        project_id, campaign_id, channel, address = raw.split(":", 3)
        return UnsubscribeClaim(int(project_id), int(campaign_id), channel, address)
    except (ValueError, UnicodeDecodeError):
        raise UnsubscribeTokenError("invalid", "This unsubscribe link is not valid.") from None


def unsubscribe_url(token: str) -> str:
    base = str(getattr(settings, "WAGTAILADMIN_BASE_URL", "http://127.0.0.1:8000")).rstrip("/")
    return f"{base}/u/{token}"


def unsubscribe_headers(*, project_id: int, campaign_id: int, address: str, channel: str = "email") -> dict[str, str]:
    """The two RFC 8058 headers every campaign email carries."""
    url = unsubscribe_url(
        unsubscribe_token(project_id=project_id, campaign_id=campaign_id, address=address, channel=channel)
    )
    return {"List-Unsubscribe": f"<{url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}


def campaign_content_decorate(row: Any, content: dict[str, Any]) -> dict[str, Any]:
    """Dispatcher hook: every campaign email carries its own one-click unsubscribe link."""
    if row.channel != "email" or not str(row.origin_id).isdigit():
        return content
    headers = dict(content.get("headers") or {})
    headers.update(
        unsubscribe_headers(project_id=row.project_id, campaign_id=int(row.origin_id), address=row.destination)
    )
    return {**content, "headers": headers}
