"""Custom SMTP through Django's SMTP backend, with the connector's own relay.

Implicit TLS on 465 and STARTTLS otherwise; plain text only when the connector says
``security: "none"`` explicitly. Certificates are always verified (a connector may
name its own CA for a private relay). One SMTP session serves the whole batch.
"""

from __future__ import annotations

import contextlib
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from email.utils import make_msgid
from functools import cached_property
from typing import Any

from django.core.mail import EmailMultiAlternatives
from django.core.mail.backends.smtp import EmailBackend

from ._http import AUTH_FAILED, connector_timeout
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

SECURITY_MODES = ("ssl", "starttls", "none")


def from_domain_allowed(from_email: str, domain: str) -> bool:
    """The from-address must be on the account's domain or one of its subdomains."""
    sender_domain = from_email.rpartition("@")[2].strip(" >").lower()
    domain = domain.strip().lower().rstrip(".")
    return bool(domain) and (sender_domain == domain or sender_domain.endswith("." + domain))


def security_mode(settings: Mapping[str, Any]) -> str:
    mode = settings.get("security") or ("ssl" if int(settings.get("port") or 587) == 465 else "starttls")
    if mode not in SECURITY_MODES:
        raise ConfigError(f"security must be one of {', '.join(SECURITY_MODES)}", field="security")
    return mode


class VerifyingSMTPBackend(EmailBackend):
    """Django's backend, verifying the relay against the connector's CA when given."""

    def __init__(self, *, ca_certificate: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ca_certificate = ca_certificate

    @cached_property
    def ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        if self.ca_certificate:
            context.load_verify_locations(cadata=self.ca_certificate)
        return context


@register_adapter
class SMTPAdapter(ChannelAdapter):
    channel = "email"
    provider = "smtp"
    max_batch_size = 100

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        if not isinstance(settings.get("host"), str) or not settings["host"].strip():
            raise ConfigError("settings need the SMTP host", field="host")
        try:
            port = int(settings.get("port") or 0)
        except (TypeError, ValueError):
            port = 0
        if not 0 < port < 65536:
            raise ConfigError("settings need a valid SMTP port (465 or 587)", field="port")
        security_mode(settings)
        domain = settings.get("domain")
        if not isinstance(domain, str) or not domain.strip():
            raise ConfigError("settings need the account's sending domain", field="domain")
        from_email = settings.get("from_email")
        if not isinstance(from_email, str) or "@" not in from_email:
            raise ConfigError("settings need a from_email address", field="from_email")
        if not from_domain_allowed(from_email, domain):
            raise ConfigError(f"{from_email} is not on the domain {domain}", field="from_email")
        if bool(credentials.get("username")) != bool(credentials.get("password")):
            raise ConfigError("give both username and password, or neither", field="password")
        connector_timeout(settings)

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        settings = config.settings
        mode = security_mode(settings)
        self.backend = VerifyingSMTPBackend(
            host=settings["host"],
            port=int(settings["port"]),
            username=config.credentials.get("username") or "",
            password=config.credentials.get("password") or "",
            use_ssl=mode == "ssl",
            use_tls=mode == "starttls",
            timeout=connector_timeout(settings),
            ca_certificate=settings.get("ca_certificate") or "",
        )

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        try:
            return [self._send_one(message) for message in messages]
        finally:
            self.close()

    def close(self) -> None:
        # The session is gone either way.
        with contextlib.suppress(OSError, smtplib.SMTPException):
            self.backend.close()

    def _connect(self) -> SendResult | None:
        try:
            self.backend.open()
        except smtplib.SMTPNotSupportedError:
            return SendResult.permanent("tls_refused", "the SMTP server does not offer STARTTLS")
        except ssl.SSLError as exc:
            return SendResult.permanent("tls_failed", f"TLS with the SMTP server failed: {exc}")
        except smtplib.SMTPAuthenticationError as exc:
            return SendResult.permanent(AUTH_FAILED, _smtp_text(exc.smtp_code, exc.smtp_error))
        except TimeoutError:
            return SendResult.retryable("timeout", "the SMTP server did not answer in time")
        except (OSError, smtplib.SMTPException) as exc:
            if _timed_out(exc):
                return SendResult.retryable("timeout", "the SMTP server did not answer in time")
            return SendResult.retryable("connection_error", f"could not reach the SMTP server: {exc}")
        return None

    def _send_one(self, message: OutboundMessage) -> SendResult:
        content = message.content
        from_email = content.get("from_email") or self.config.settings["from_email"]
        if not from_domain_allowed(from_email, self.config.settings.get("domain", "")):
            return SendResult.permanent(
                "from_domain_mismatch",
                f"{from_email} is not on the connector's domain {self.config.settings.get('domain')}",
            )
        failure = self._connect()
        if failure:
            return failure
        domain = from_email.rpartition("@")[2]
        message_id = make_msgid(domain=domain)
        email = EmailMultiAlternatives(
            subject=content.get("subject", ""),
            body=content.get("text", ""),
            from_email=from_email,
            to=[message.destination],
            reply_to=[content["reply_to"]] if content.get("reply_to") else None,
            headers={**dict(content.get("headers") or {}), "Message-ID": message_id},
            connection=self.backend,
        )
        if content.get("html"):
            email.attach_alternative(content["html"], "text/html")
        try:
            email.send()
        except smtplib.SMTPRecipientsRefused as exc:
            code, text = next(iter(exc.recipients.values()))
            return _by_code(code, text, destination_invalid=True)
        except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as exc:
            return _by_code(exc.smtp_code, exc.smtp_error)
        except TimeoutError:
            self.close()  # a half-answered session cannot be trusted for the next message
            return SendResult.retryable("timeout", "the SMTP server did not answer in time")
        except (OSError, smtplib.SMTPException) as exc:
            self.close()
            if _timed_out(exc):
                return SendResult.retryable("timeout", "the SMTP server did not answer in time")
            return SendResult.retryable("connection_error", f"SMTP session failed: {exc}")
        return SendResult.accepted(message_id.strip("<>"))


def _timed_out(exc: BaseException) -> bool:
    # smtplib turns a socket timeout while reading a reply into SMTPServerDisconnected.
    return isinstance(exc, TimeoutError) or isinstance(exc.__context__, TimeoutError)


def _smtp_text(code: int, error: bytes | str) -> str:
    text = error.decode("utf-8", errors="replace") if isinstance(error, bytes) else str(error)
    return f"{code} {text}"


def _by_code(code: int, error: bytes | str, *, destination_invalid: bool = False) -> SendResult:
    """4xx replies are transient by RFC 5321; 5xx are final."""
    if 400 <= code < 500:
        return SendResult.retryable(f"smtp_{code}", _smtp_text(code, error), throttled=code == 421)
    return SendResult.permanent(
        f"smtp_{code}", _smtp_text(code, error), destination_invalid=destination_invalid and code in (550, 551, 553)
    )
