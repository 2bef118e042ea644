"""Email receipts through Anymail's own tracking-webhook views, built per connector.

Anymail verifies the request (basic auth, Mailgun's HMAC, Resend's Svix signature,
SendGrid's ECDSA signature, SES's SNS headers) and normalises the ESP's events; we call
its validators and parser directly, with the connector's secrets, instead of going
through its global settings and signal.
"""

from __future__ import annotations

import time
from typing import Any

from anymail.exceptions import AnymailError, AnymailWebhookValidationFailure
from anymail.signals import AnymailTrackingEvent, EventType
from anymail.webhooks.amazon_ses import AmazonSESTrackingWebhookView
from anymail.webhooks.brevo import BrevoTrackingWebhookView
from anymail.webhooks.mailgun import MailgunTrackingWebhookView
from anymail.webhooks.postmark import PostmarkTrackingWebhookView
from anymail.webhooks.resend import ResendTrackingWebhookView
from anymail.webhooks.sendgrid import SendGridTrackingWebhookView
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

from apps.core.ids import parse_id
from apps.delivery.channels.base import ReceiptEvent, ReceiptStatus

from .base import WebhookRefused, register_parser, stable_event_id

STATUS_FOR_EVENT = {
    EventType.DELIVERED: ReceiptStatus.DELIVERED,
    EventType.BOUNCED: ReceiptStatus.BOUNCED,
    # The ESP refused to send (its own suppression list, invalid address): suppress too.
    EventType.REJECTED: ReceiptStatus.BOUNCED,
    EventType.FAILED: ReceiptStatus.FAILED,
    EventType.COMPLAINED: ReceiptStatus.COMPLAINED,
    EventType.OPENED: ReceiptStatus.OPENED,
    EventType.CLICKED: ReceiptStatus.CLICKED,
    EventType.UNSUBSCRIBED: ReceiptStatus.UNSUBSCRIBED,
}
# Mailgun signs a timestamp; anything older is a replay, not a provider retry.
MAX_SIGNATURE_AGE_SECONDS = 15 * 60


def _basic_auth(credentials: dict[str, Any]) -> list[str]:
    secret = credentials.get("webhook_secret") or ""
    return [secret] if isinstance(secret, str) and secret else []


def _view_kwargs(provider: str, credentials: dict[str, Any], settings: dict[str, Any]) -> tuple[type, dict[str, Any]]:
    """The Anymail view class and the connector's verification secrets for it."""
    kwargs: dict[str, Any] = {"webhook_secret": _basic_auth(credentials)}
    verified = bool(kwargs["webhook_secret"])
    if provider == "mailgun":
        key = credentials.get("webhook_signing_key") or ""
        kwargs["webhook_signing_key"] = key
        return MailgunTrackingWebhookView, _checked(kwargs, bool(key))
    if provider == "resend":
        if credentials.get("webhook_signing_secret"):
            kwargs["signing_secret"] = credentials["webhook_signing_secret"]
            verified = True
        return ResendTrackingWebhookView, _checked(kwargs, verified)
    if provider == "sendgrid":
        if credentials.get("webhook_verification_key"):
            kwargs["tracking_webhook_verification_key"] = credentials["webhook_verification_key"]
            verified = True
        return SendGridTrackingWebhookView, _checked(kwargs, verified)
    if provider == "ses":
        kwargs["client_params"] = {
            "aws_access_key_id": credentials.get("access_key_id"),
            "aws_secret_access_key": credentials.get("secret_access_key"),
            "region_name": settings.get("region"),
        }
        return AmazonSESTrackingWebhookView, _checked(kwargs, verified)
    if provider == "postmark":
        return PostmarkTrackingWebhookView, _checked(kwargs, verified)
    if provider == "brevo":
        return BrevoTrackingWebhookView, _checked(kwargs, verified)
    raise WebhookRefused(f"no email receipts for provider {provider}", code="unknown_provider", status=404)


def _checked(kwargs: dict[str, Any], verified: bool) -> dict[str, Any]:
    if not verified:
        # Never accept receipts nobody can vouch for: they would bounce and suppress
        # real addresses on a stranger's word.
        raise WebhookRefused(
            "this connector has no webhook secret configured, so receipts cannot be verified",
            code="webhook_not_configured",
        )
    return kwargs


def _receipt(provider: str, event: AnymailTrackingEvent) -> ReceiptEvent | None:
    status = STATUS_FOR_EVENT.get(event.event_type)
    if status is None:
        return None  # queued, sent, deferred, autoresponded: nothing to record
    metadata = event.metadata or {}
    raw_id = str(metadata.get("delivery_id") or "")
    event_id = event.event_id or stable_event_id(event.message_id, event.event_type, event.timestamp, event.recipient)
    return ReceiptEvent(
        provider_event_id=f"{provider}:{event_id}:{event.event_type}",
        status=status,
        provider_reference=str(event.message_id or "").strip("<>"),
        delivery_id=parse_id(raw_id),
        occurred_at=event.timestamp,
        hard_bounce=event.event_type in (EventType.BOUNCED, EventType.REJECTED),
        description=str(event.description or event.reject_reason or event.mta_response or "")[:500],
        raw={"event_type": event.event_type, "recipient": event.recipient or "", "reject_reason": event.reject_reason},
    )


def _check_mailgun_freshness(request: HttpRequest) -> None:
    import json

    try:
        timestamp = int(json.loads(request.body)["signature"]["timestamp"])
    except (KeyError, ValueError, TypeError):
        try:
            timestamp = int(request.POST["timestamp"])
        except (KeyError, ValueError):
            return  # Anymail refuses the unsigned request itself
    if abs(time.time() - timestamp) > MAX_SIGNATURE_AGE_SECONDS:
        raise WebhookRefused("the signed timestamp is too old: a replayed request", code="webhook_replayed", status=409)


def parse_email_receipts(request: HttpRequest, connector: Any) -> list[ReceiptEvent]:
    view_class, kwargs = _view_kwargs(connector.provider, connector.credentials, connector.settings or {})
    try:
        view = view_class(**kwargs)
        view.run_validators(request)
    except AnymailWebhookValidationFailure as exc:
        raise WebhookRefused(str(exc)) from None
    except (AnymailError, ImproperlyConfigured, ValueError) as exc:
        raise WebhookRefused(f"the request could not be verified: {exc}", status=400) from None
    if connector.provider == "mailgun":
        _check_mailgun_freshness(request)
    try:
        events = view.parse_events(request)
    except (AnymailError, ValueError, KeyError, TypeError) as exc:
        raise WebhookRefused(f"the request is not a {connector.provider} tracking event: {exc}", status=400) from None
    return [receipt for event in events if (receipt := _receipt(connector.provider, event)) is not None]


for _provider in ("resend", "ses", "postmark", "sendgrid", "mailgun", "brevo"):
    register_parser(f"email:{_provider}")(parse_email_receipts)
