"""Email through django-anymail: Resend, Amazon SES, Postmark, SendGrid, Mailgun, Brevo.

Each connector gets its own Anymail backend instance built from its own credentials
(kwargs to ``get_connection`` override Anymail's global settings), opened once per
batch so its HTTP session (or boto3 client) is reused for every message. Each
delivery is one message to one recipient, so Anymail's per-recipient status is the
delivery's status.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import requests
from anymail.exceptions import (
    AnymailAPIError,
    AnymailError,
    AnymailRecipientsRefused,
    AnymailWarning,
)
from django.core.mail import EmailMultiAlternatives, get_connection

from ._http import AUTH_FAILED, check_api_url, classify_request_error, classify_status, connector_timeout, require
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

# Anymail statuses that mean the provider will not attempt delivery to this address.
REFUSED_STATUSES = {"rejected", "invalid"}


def check_from_email(settings: Mapping[str, Any]) -> None:
    from_email = settings.get("from_email")
    if not isinstance(from_email, str) or "@" not in from_email:
        raise ConfigError("settings need a from_email address", field="from_email")


class AnymailEmailAdapter(ChannelAdapter):
    channel = "email"
    max_batch_size = 100
    backend_path: ClassVar[str]
    credential_fields: ClassVar[tuple[str, ...]] = ("api_key",)

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        require(credentials, *cls.credential_fields)
        check_from_email(settings)
        check_api_url(settings)
        connector_timeout(settings)

    def backend_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {name: self.config.credentials[name] for name in self.credential_fields}
        if self.config.settings.get("api_url"):
            kwargs["api_url"] = self.config.settings["api_url"]
        kwargs["timeout"] = connector_timeout(self.config.settings)
        return kwargs

    def before_send(self, connection: Any, message: OutboundMessage) -> None:
        """Per-message hook, e.g. the provider's idempotency key."""

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        try:
            connection = self._open_connection()
        except Exception as exc:  # noqa: BLE001 - boto3 refuses bad client params here
            return [SendResult.permanent("config_error", str(exc)) for _ in messages]
        return [self._send_one(connection, message) for message in messages]

    def _open_connection(self) -> Any:
        # The dispatcher keeps an adapter for a few seconds across batches: keeping the
        # backend open keeps its HTTP keep-alive session (or boto3 client) warm too.
        connection = getattr(self, "_connection", None)
        if connection is None:
            with warnings.catch_warnings():
                # SendGrid's backend warns on every instantiation that Anymail no longer
                # tests it; the warning says nothing about this message.
                warnings.simplefilter("ignore", AnymailWarning)
                connection = get_connection(self.backend_path, fail_silently=False, **self.backend_kwargs())
            connection.open()
            self._connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self, "_connection", None)
        self._connection = None
        if connection is not None:
            connection.close()

    def build_email(self, connection: Any, message: OutboundMessage) -> EmailMultiAlternatives:
        content = message.content
        email = EmailMultiAlternatives(
            subject=content.get("subject", ""),
            body=content.get("text", ""),
            from_email=content.get("from_email") or self.config.settings.get("from_email"),
            to=[message.destination],
            reply_to=[content["reply_to"]] if content.get("reply_to") else None,
            headers=dict(content.get("headers") or {}),
            connection=connection,
        )
        if content.get("html"):
            email.attach_alternative(content["html"], "text/html")
        # Comes back on tracking webhooks, so receipts find their delivery.
        email.metadata = {"delivery_id": str(message.delivery_id)}  # type: ignore[attr-defined]
        return email

    def _send_one(self, connection: Any, message: OutboundMessage) -> SendResult:
        try:
            email = self.build_email(connection, message)
            self.before_send(connection, message)
            email.send()
        except AnymailRecipientsRefused as exc:
            return SendResult.permanent("recipient_refused", _first_line(exc), destination_invalid=True)
        except AnymailAPIError as exc:
            return self.classify_api_error(exc)
        except (AnymailError, ValueError) as exc:
            # Invalid address format, unsupported feature, unserialisable data:
            # sending the same message again cannot succeed.
            return SendResult.permanent("invalid_message", _first_line(exc))
        status = email.anymail_status  # type: ignore[attr-defined]
        recipient = status.recipients.get(message.destination)
        recipient_status = recipient.status if recipient else (next(iter(status.status), "unknown"))
        reference = (recipient.message_id if recipient else status.message_id) or ""
        if recipient_status in REFUSED_STATUSES:
            return SendResult.permanent(
                f"recipient_{recipient_status}",
                f"{self.provider} {recipient_status} {message.destination}",
                destination_invalid=True,
            )
        if recipient_status == "failed":
            return SendResult.retryable("provider_failed", f"{self.provider} reported a failed send")
        # Mailgun and Brevo answer "<id@host>" but report "id@host" on their webhooks.
        return SendResult.accepted(str(reference).strip("<>"), details={"status": recipient_status})

    def classify_api_error(self, exc: AnymailAPIError) -> SendResult:
        cause = exc.__cause__
        if isinstance(exc, requests.RequestException) and exc.response is None:
            # Anymail's error is also the requests error (Timeout, ConnectionError).
            return classify_request_error(exc)
        if isinstance(cause, requests.RequestException):
            return classify_request_error(cause)
        status = getattr(exc, "status_code", None)
        if status is None:
            # A 2xx with a body Anymail could not read: the message may have gone out,
            # so retry only under the idempotency key the provider deduplicates on.
            return SendResult.retryable("unreadable_response", _first_line(exc))
        headers = getattr(exc.response, "headers", None)
        code = AUTH_FAILED if status in (401, 403) else ""
        return classify_status(status, code=code, message=_first_line(exc), headers=headers)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text[:500]


@register_adapter
class ResendAdapter(AnymailEmailAdapter):
    provider = "resend"
    backend_path = "anymail.backends.resend.EmailBackend"

    def before_send(self, connection: Any, message: OutboundMessage) -> None:
        # Resend deduplicates sends by this header for 24 h, so a send retried after a
        # crash (same delivery key) is not delivered twice.
        connection.session.headers["Idempotency-Key"] = message.delivery_key[:256]


@register_adapter
class PostmarkAdapter(AnymailEmailAdapter):
    provider = "postmark"
    backend_path = "anymail.backends.postmark.EmailBackend"
    credential_fields = ("server_token",)

    def backend_kwargs(self) -> dict[str, Any]:
        kwargs = super().backend_kwargs()
        if self.config.settings.get("message_stream"):
            kwargs["message_stream"] = self.config.settings["message_stream"]
        return kwargs


@register_adapter
class SendGridAdapter(AnymailEmailAdapter):
    provider = "sendgrid"
    backend_path = "anymail.backends.sendgrid.EmailBackend"


@register_adapter
class MailgunAdapter(AnymailEmailAdapter):
    provider = "mailgun"
    backend_path = "anymail.backends.mailgun.EmailBackend"

    def backend_kwargs(self) -> dict[str, Any]:
        kwargs = super().backend_kwargs()
        if self.config.settings.get("domain"):
            kwargs["sender_domain"] = self.config.settings["domain"]
        return kwargs


@register_adapter
class BrevoAdapter(AnymailEmailAdapter):
    provider = "brevo"
    backend_path = "anymail.backends.brevo.EmailBackend"
