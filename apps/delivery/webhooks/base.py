"""What the receipt parsers share: the parser registry, refusals, and the replay guard."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.http import HttpRequest

from apps.core.registry import Registry
from apps.delivery.channels.base import ReceiptEvent

SEEN_TTL_SECONDS = 7 * 24 * 3600


class WebhookRefused(Exception):
    """The request is not a genuine, fresh report from the connector's provider."""

    def __init__(self, message: str, *, code: str = "webhook_refused", status: int = 403) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


# (request, connector) -> events. Raise WebhookRefused when verification fails.
ReceiptParser = Callable[[HttpRequest, Any], list[ReceiptEvent]]
receipt_parsers: Registry[ReceiptParser] = Registry("receipt webhook parser")


def register_parser(provider: str) -> Callable[[ReceiptParser], ReceiptParser]:
    return receipt_parsers.register(provider)


def request_fingerprint(connector_id: int, request: HttpRequest) -> str:
    """The body plus every signature-bearing header: a replay is the same request again."""
    digest = hashlib.sha256(request.body)
    for header in sorted(request.headers):
        lowered = header.lower()
        if "signature" in lowered or lowered in ("authorization", "webhook-id", "svix-id", "x-amz-sns-message-id"):
            digest.update(f"{lowered}:{request.headers[header]}".encode())
    return f"tidings:webhook-seen:{connector_id}:{digest.hexdigest()}"


def seen_before(key: str) -> bool:
    return cache.get(key) is not None


def mark_seen(key: str) -> None:
    cache.set(key, 1, SEEN_TTL_SECONDS)


def stable_event_id(*parts: object) -> str:
    return hashlib.sha256("|".join(str(part) for part in parts).encode()).hexdigest()[:40]
