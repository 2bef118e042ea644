"""Payload builders for the dry-run adapters: what each real provider API would receive."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import time
from typing import Any
from urllib.parse import urlparse

from anymail.backends.test import EmailBackend as AnymailTestBackend
from anymail.backends.test import TestPayload as AnymailTestPayload
from anymail.exceptions import AnymailError, AnymailInvalidAddress
from anymail.utils import EmailAddress, parse_address_list
from django.core.mail import EmailMultiAlternatives
from django.core.mail.message import BadHeaderError
from firebase_admin import messaging

from apps.delivery.channels.base import OutboundMessage

E164 = re.compile(r"^\+[1-9]\d{6,14}$")


class Invalid(ValueError):
    """What the provider would refuse outright: a permanent result."""

    def __init__(self, message: str, code: str = "invalid", destination: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.destination = destination


class DryRunEmailPayload(AnymailTestPayload):
    """Anymail's test payload, with the sender's address parsed once per backend.

    Every message of a connector has the same ``from_email``; parsing it with the email
    package's RFC 5322 parser is a third of the payload's cost. The recipient, which
    differs per message, is still parsed and validated for every message.
    """

    base_message_attrs = tuple(
        ("from_email", combiner, "parsed_from_email") if attr == "from_email" else (attr, combiner, converter)
        for attr, combiner, converter in AnymailTestPayload.base_message_attrs
    )

    def parsed_from_email(self, value: Any) -> list[EmailAddress]:
        cache: dict[str, tuple[EmailAddress, ...]] = self.backend.parsed_senders
        if not isinstance(value, str):
            return parse_address_list(value, field="from_email")
        parsed = cache.get(value)
        if parsed is None:
            parsed = tuple(parse_address_list(value, field="from_email"))
            if len(cache) >= SENDER_CACHE_SIZE:
                cache.clear()
            cache[value] = parsed
        return list(parsed)


SENDER_CACHE_SIZE = 64


class DryRunEmailBackend(AnymailTestBackend):
    """Anymail's test backend (the full payload processing of a real ESP backend) without
    keeping every message in ``mail.outbox``, which would grow without bound in a worker."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("payload_class", DryRunEmailPayload)
        super().__init__(fail_silently=False, **kwargs)
        # Parsed sender addresses (EmailAddress is immutable), see DryRunEmailPayload.
        self.parsed_senders: dict[str, tuple[EmailAddress, ...]] = {}

    def post_to_esp(self, payload: Any, message: Any) -> Any:
        message.anymail_test_params = payload.get_params()
        return {"recipient_status": {}}

    def parse_recipient_status(self, response: Any, payload: Any, message: Any) -> Any:
        from anymail.message import AnymailRecipientStatus

        return {email: AnymailRecipientStatus(message_id=None, status="queued") for email in payload.recipient_emails}


def email_payload(backend: DryRunEmailBackend, message: OutboundMessage, from_email: str) -> dict[str, Any]:
    content = message.content
    try:
        email = EmailMultiAlternatives(
            subject=content.get("subject", ""),
            body=content.get("text", ""),
            from_email=content.get("from_email") or from_email,
            to=[message.destination],
            reply_to=[content["reply_to"]] if content.get("reply_to") else None,
            headers=dict(content.get("headers") or {}),
        )
        if content.get("html"):
            email.attach_alternative(content["html"], "text/html")
        email.metadata = {"delivery_key": message.delivery_key}  # type: ignore[attr-defined]
        backend.send_messages([email])
    except AnymailInvalidAddress as exc:
        raise Invalid(str(exc), code="invalid_address", destination=True) from exc
    except (AnymailError, BadHeaderError, ValueError) as exc:
        raise Invalid(str(exc), code="rejected_content") from exc
    return email.anymail_test_params  # type: ignore[attr-defined]


def push_payload(message: OutboundMessage) -> dict[str, Any]:
    content = message.content
    try:
        fcm = messaging.Message(
            fid=message.destination,  # firebase-admin 7 addresses app instances by installation id
            notification=messaging.Notification(
                title=content.get("title"), body=content.get("body"), image=content.get("image") or None
            ),
            data={str(k): str(v) for k, v in (content.get("data") or {}).items()} or None,
        )
        # Exactly what send_each would post for this message (validation included).
        return {"message": messaging._MessagingService.encode_message(fcm)}
    except (ValueError, TypeError) as exc:
        raise Invalid(str(exc), code="invalid_message") from exc


def sms_payload(message: OutboundMessage, sender: str) -> dict[str, Any]:
    if not E164.match(message.destination):
        raise Invalid(f"{message.destination!r} is not an E.164 phone number", "invalid_number", destination=True)
    text = str(message.content.get("text", ""))
    if not text:
        raise Invalid("an SMS needs text", code="empty_message")
    return {"To": message.destination, "From": sender, "Body": text}


def whatsapp_payload(message: OutboundMessage) -> dict[str, Any]:
    if not E164.match(message.destination):
        raise Invalid(f"{message.destination!r} is not an E.164 phone number", "invalid_number", destination=True)
    content = message.content
    if not content.get("template"):
        raise Invalid("WhatsApp messages need an approved template name", code="missing_template")
    return {
        "messaging_product": "whatsapp",
        "to": message.destination.lstrip("+"),
        "type": "template",
        "template": {
            "name": content["template"],
            "language": {"code": content.get("language", "en")},
            "components": [
                {"type": "body", "parameters": [{"type": "text", "text": str(v)} for v in content.get("variables", [])]}
            ],
        },
    }


def slack_payload(message: OutboundMessage) -> dict[str, Any]:
    payload: dict[str, Any] = {"channel": message.destination, "text": message.content.get("text", "")}
    if message.content.get("blocks"):
        payload["blocks"] = message.content["blocks"]
    return payload


def teams_payload(message: OutboundMessage) -> dict[str, Any]:
    card = message.content.get("card") or {
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [{"type": "TextBlock", "text": message.content.get("text", ""), "wrap": True}],
    }
    return {
        "type": "message",
        "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive", "content": card}],
    }


def webhook_payload(message: OutboundMessage, secret: str) -> dict[str, Any]:
    url = urlparse(message.destination)
    if url.scheme not in {"http", "https"} or not url.netloc:
        raise Invalid(f"{message.destination!r} is not an http(s) URL", "invalid_url", destination=True)
    body = json.dumps(message.content.get("body", {}), separators=(",", ":"), sort_keys=True)
    timestamp = str(int(time.time()))
    signed = f"{message.delivery_key}.{timestamp}.{body}".encode()
    signature = base64.b64encode(hmac.new(secret.encode(), signed, hashlib.sha256).digest()).decode()
    return {
        "url": message.destination,
        "headers": {
            "webhook-id": message.delivery_key,
            "webhook-timestamp": timestamp,
            "webhook-signature": f"v1,{signature}",
        },
        "body": body,
    }
