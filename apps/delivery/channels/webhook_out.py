"""Outgoing webhooks signed the Standard Webhooks way.

Headers ``webhook-id`` (the delivery key: the same across retries, so receivers can
deduplicate), ``webhook-timestamp`` (unix seconds) and ``webhook-signature``:
``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``, one entry per active secret,
space-separated, so a receiver keeps verifying while secrets rotate. The response's
status, headers and first 4 KB are kept on the attempt.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ._http import classify_status, connector_timeout, new_session, post, response_details
from ._netguard import UnsafeURL, check_url, pinned_request
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format marker, not a secret


def secret_bytes(secret: str) -> bytes:
    """A ``whsec_<base64>`` secret's key bytes; any other string is used as UTF-8."""
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except ValueError:
            raise ConfigError("a whsec_ secret must be base64 after the prefix", field="secrets") from None
    return secret.encode()


def active_secrets(credentials: Mapping[str, Any]) -> list[str]:
    raw = credentials.get("secrets") or credentials.get("secret") or []
    if isinstance(raw, str):
        raw = raw.split()
    return [str(secret) for secret in raw if str(secret).strip()]


def sign(secrets: Sequence[str], message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    return " ".join(
        "v1," + base64.b64encode(hmac.new(secret_bytes(secret), signed, hashlib.sha256).digest()).decode()
        for secret in secrets
    )


@register_adapter
class WebhookAdapter(ChannelAdapter):
    channel = "webhook"
    provider = "webhook"
    max_batch_size = 50

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        secrets = active_secrets(credentials)
        if not secrets:
            raise ConfigError("credentials need at least one signing secret", field="secrets")
        for secret in secrets:
            secret_bytes(secret)
        if settings.get("url"):
            try:
                check_url(str(settings["url"]))
            except UnsafeURL as exc:
                raise ConfigError(str(exc), field="url") from None
        connector_timeout(settings)

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.session = new_session()
        self.timeout = connector_timeout(config.settings)
        self.secrets = active_secrets(config.credentials)

    def close(self) -> None:
        self.session.close()

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        return [self._send_one(message) for message in messages]

    def _send_one(self, message: OutboundMessage) -> SendResult:
        url = message.destination or str(self.config.settings.get("url") or "")
        try:
            addresses = check_url(url)
        except UnsafeURL as exc:
            return SendResult.permanent("unsafe_url", str(exc), destination_invalid=True)
        pin_headers: dict[str, str] = {}
        if addresses:
            url, pin_headers = pinned_request(url, addresses[0], self.session)
        body = message.content.get("body", {})
        raw = body.encode() if isinstance(body, str) else json.dumps(body, separators=(",", ":")).encode()
        timestamp = int(time.time())
        headers = {
            **pin_headers,
            "Content-Type": "application/json",
            "webhook-id": message.delivery_key,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(self.secrets, message.delivery_key, timestamp, raw),
        }
        response = post(self.session, url, timeout=self.timeout, data=raw, headers=headers)
        if isinstance(response, SendResult):
            return response
        details = response_details(response)
        if 200 <= response.status_code < 300:
            return SendResult.accepted(message.delivery_key, details=details)
        if 300 <= response.status_code < 400:
            return SendResult.permanent(
                "redirect_refused",
                f"the endpoint redirects (HTTP {response.status_code}); redirects are not followed",
                details=details,
            )
        # 410 Gone: the receiver says this endpoint is retired for good.
        return classify_status(
            response.status_code, headers=response.headers, details=details, invalid_destination_statuses=(410,)
        )
