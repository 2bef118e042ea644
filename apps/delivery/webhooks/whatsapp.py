"""WhatsApp Cloud API status webhooks, verified by ``X-Hub-Signature-256``
(``sha256=`` + hex HMAC-SHA256 of the raw body, keyed with the app secret). The GET
subscription handshake answers ``hub.challenge`` when ``hub.verify_token`` matches."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest

from apps.delivery.channels.base import ReceiptEvent, ReceiptStatus

from .base import WebhookRefused, register_parser

STATUS = {"delivered": ReceiptStatus.DELIVERED, "read": ReceiptStatus.OPENED, "failed": ReceiptStatus.FAILED}
# "Message undeliverable" / "user's number is not on WhatsApp": the destination is gone.
HARD_ERROR_CODES = {131026, 131030}


def hub_signature(app_secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


def verify_subscription(request: HttpRequest, connector: Any) -> str:
    """The GET handshake Meta makes when the webhook URL is configured."""
    expected = str(connector.credentials.get("verify_token") or "")
    given = request.GET.get("hub.verify_token", "")
    if request.GET.get("hub.mode") != "subscribe" or not expected or not hmac.compare_digest(expected, given):
        raise WebhookRefused("hub.verify_token does not match this connector")
    return request.GET.get("hub.challenge", "")


@register_parser("whatsapp:cloudapi")
def parse_whatsapp_receipts(request: HttpRequest, connector: Any) -> list[ReceiptEvent]:
    secret = str(connector.credentials.get("app_secret") or "")
    given = request.headers.get("X-Hub-Signature-256", "")
    if not secret or not given or not hmac.compare_digest(hub_signature(secret, request.body), given):
        raise WebhookRefused("X-Hub-Signature-256 is missing or does not match")
    try:
        payload = json.loads(request.body)
    except ValueError:
        raise WebhookRefused("the body is not JSON", status=400) from None
    phone_number_id = str((connector.settings or {}).get("phone_number_id") or "")
    events: list[ReceiptEvent] = []
    for entry in payload.get("entry") or []:
        for change in entry.get("changes") or []:
            value = change.get("value") or {}
            metadata_id = str((value.get("metadata") or {}).get("phone_number_id") or "")
            if phone_number_id and metadata_id and metadata_id != phone_number_id:
                continue  # another number on the same app: not this connector's messages
            for item in value.get("statuses") or []:
                state = str(item.get("status") or "")
                status = STATUS.get(state)
                if status is None or not item.get("id"):
                    continue
                errors = item.get("errors") or []
                codes = {int(e.get("code")) for e in errors if str(e.get("code", "")).isdigit()}
                hard = bool(codes & HARD_ERROR_CODES)
                if hard:
                    status = ReceiptStatus.BOUNCED  # a hard bounce is what suppresses the number
                try:
                    occurred_at = datetime.fromtimestamp(int(item.get("timestamp")), UTC)
                except (TypeError, ValueError):
                    occurred_at = None
                events.append(
                    ReceiptEvent(
                        provider_event_id=f"whatsapp:{item['id']}:{state}",
                        status=status,
                        provider_reference=str(item["id"]),
                        occurred_at=occurred_at,
                        hard_bounce=hard,
                        description="; ".join(str(e.get("title") or e.get("message") or "") for e in errors)[:500],
                        raw={"status": state, "errors": errors},
                    )
                )
    return events
