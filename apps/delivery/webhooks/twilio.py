"""Twilio status callbacks, verified by ``X-Twilio-Signature``: base64 HMAC-SHA1, keyed
with the account's auth token, over the full callback URL followed by every POST
parameter name and value, sorted by name."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from django.http import HttpRequest

from apps.delivery.channels.base import ReceiptEvent, ReceiptStatus
from apps.delivery.channels.sms_twilio import status_callback_url

from .base import WebhookRefused, register_parser

STATUS = {
    "delivered": ReceiptStatus.DELIVERED,
    "read": ReceiptStatus.OPENED,
    "undelivered": ReceiptStatus.FAILED,
    "failed": ReceiptStatus.FAILED,
}
# Carrier answers meaning the number itself is wrong: suppress it.
HARD_ERROR_CODES = {"30005", "30006", "21211", "21614", "30008"}


def twilio_signature(auth_token: str, url: str, params: dict[str, list[str]]) -> str:
    payload = url + "".join(name + value for name in sorted(params) for value in params[name])
    digest = hmac.new(auth_token.encode(), payload.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def _candidate_urls(request: HttpRequest, connector: Any) -> list[str]:
    # Behind a proxy the URL Twilio signed is the public one we gave it, not
    # necessarily the one Django sees.
    urls = [request.build_absolute_uri()]
    configured = status_callback_url(connector.pk, connector.settings or {})
    if configured:
        urls.append(configured + (f"?{request.META['QUERY_STRING']}" if request.META.get("QUERY_STRING") else ""))
    return urls


@register_parser("sms:twilio")
def parse_twilio_receipts(request: HttpRequest, connector: Any) -> list[ReceiptEvent]:
    token = str(connector.credentials.get("auth_token") or "")
    given = request.headers.get("X-Twilio-Signature", "")
    params = {key: request.POST.getlist(key) for key in request.POST}
    if (
        not token
        or not given
        or not any(
            hmac.compare_digest(twilio_signature(token, url, params), given)
            for url in _candidate_urls(request, connector)
        )
    ):
        raise WebhookRefused("X-Twilio-Signature is missing or does not match")
    if request.POST.get("AccountSid") and request.POST["AccountSid"] != connector.credentials.get("account_sid"):
        raise WebhookRefused("the callback is for another Twilio account")
    sid = request.POST.get("MessageSid") or request.POST.get("SmsSid") or ""
    state = (request.POST.get("MessageStatus") or request.POST.get("SmsStatus") or "").lower()
    status = STATUS.get(state)
    if not sid or status is None:
        return []  # queued / sending / sent: progress, not an outcome
    error_code = request.POST.get("ErrorCode") or ""
    hard = error_code in HARD_ERROR_CODES
    if hard:
        status = ReceiptStatus.BOUNCED  # a hard bounce is what suppresses the number
    occurred_at = datetime.now(UTC)
    date_header = request.headers.get("Date")
    if date_header:
        with contextlib.suppress(TypeError, ValueError):
            occurred_at = parsedate_to_datetime(date_header)
    return [
        ReceiptEvent(
            provider_event_id=f"twilio:{sid}:{state}",
            status=status,
            provider_reference=sid,
            occurred_at=occurred_at,
            hard_bounce=hard,
            description=f"{state} {error_code}".strip(),
            raw={key: request.POST.get(key) for key in ("MessageStatus", "ErrorCode", "To")},
        )
    ]
