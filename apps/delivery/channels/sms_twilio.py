"""SMS through a Twilio-compatible REST API (Twilio itself, or any provider that
speaks its Messages resource). Status callbacks come back to our per-connector
webhook URL and are verified with ``X-Twilio-Signature``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings as django_settings

from ._http import (
    AUTH_FAILED,
    check_api_url,
    classify_status,
    connector_timeout,
    json_or_empty,
    new_session,
    post,
    require,
    response_details,
)
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

TWILIO_API_URL = "https://api.twilio.com"
# Twilio error codes meaning the number can never receive this message.
INVALID_NUMBER_CODES = {21211, 21214, 21217, 21407, 21408, 21612, 21614, 21610}
THROTTLE_CODES = {20429, 14107, 30022}
AUTH_CODES = {20003, 20005, 20008}


def status_callback_url(connector_id: int | None, settings: Mapping[str, Any]) -> str:
    if settings.get("status_callback_url"):
        return str(settings["status_callback_url"])
    base = getattr(django_settings, "TIDINGS_PUBLIC_URL", "")
    if base and connector_id:
        return f"{base.rstrip('/')}/webhooks/{connector_id}/twilio"
    return ""


@register_adapter
class TwilioSMSAdapter(ChannelAdapter):
    channel = "sms"
    provider = "twilio"
    max_batch_size = 100

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        require(credentials, "account_sid", "auth_token")
        if not settings.get("from_number") and not settings.get("messaging_service_sid"):
            raise ConfigError("settings need a from_number or a messaging_service_sid", field="from_number")
        check_api_url(settings)
        connector_timeout(settings)

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.session = new_session()
        self.session.auth = (config.credentials.get("account_sid", ""), config.credentials.get("auth_token", ""))
        self.timeout = connector_timeout(config.settings)
        base = (config.settings.get("api_url") or TWILIO_API_URL).rstrip("/")
        self.url = f"{base}/2010-04-01/Accounts/{config.credentials.get('account_sid', '')}/Messages.json"

    def close(self) -> None:
        self.session.close()

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        return [self._send_one(message) for message in messages]

    def _send_one(self, message: OutboundMessage) -> SendResult:
        settings = self.config.settings
        form = {"To": message.destination, "Body": message.content.get("text", "")}
        if settings.get("messaging_service_sid"):
            form["MessagingServiceSid"] = settings["messaging_service_sid"]
        else:
            form["From"] = settings["from_number"]
        callback = status_callback_url(self.config.connector_id, settings)
        if callback:
            form["StatusCallback"] = callback
        response = post(self.session, self.url, timeout=self.timeout, data=form)
        if isinstance(response, SendResult):
            return response
        body = json_or_empty(response)
        if 200 <= response.status_code < 300 and body.get("sid"):
            if body.get("status") == "failed":
                return SendResult.permanent(str(body.get("error_code") or "failed"), body.get("error_message") or "")
            return SendResult.accepted(str(body["sid"]), details={"status": body.get("status", "")})
        code = int(body.get("code") or 0)
        text = str(body.get("message") or f"HTTP {response.status_code}")
        if code in THROTTLE_CODES:
            return classify_status(429, code=str(code), message=text, headers=response.headers)
        if code in AUTH_CODES or response.status_code == 401:
            return SendResult.permanent(AUTH_FAILED, text)
        if code in INVALID_NUMBER_CODES:
            return SendResult.permanent(str(code), text, destination_invalid=True)
        if 200 <= response.status_code < 300:
            return SendResult.retryable("unreadable_response", "the provider's answer had no message sid")
        return classify_status(
            response.status_code,
            code=str(code or ""),
            message=text,
            headers=response.headers,
            details=response_details(response),
        )
