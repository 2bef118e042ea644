"""WhatsApp through the WhatsApp Cloud API (Graph API), approved templates only.

Business-initiated messages must use a template approved by Meta; the content names
it, its language and the body variables in order. Status webhooks come back to the
connector's webhook URL, verified with ``X-Hub-Signature-256`` (the app secret).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._http import (
    ACCOUNT_SUSPENDED,
    AUTH_FAILED,
    check_api_url,
    classify_status,
    connector_timeout,
    json_or_empty,
    new_session,
    post,
    require,
)
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

GRAPH_API_URL = "https://graph.facebook.com/v21.0"
# Graph API error codes (https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes).
AUTH_CODES = {0, 190, 10, 200, 3}
THROTTLE_CODES = {4, 80007, 130429, 131048, 131056}
TRANSIENT_CODES = {1, 2, 131000, 131016, 133004}
ACCOUNT_CODES = {368, 131031}
INVALID_RECIPIENT_CODES = {131026, 131030}


def template_payload(destination: str, content: Mapping[str, Any]) -> dict[str, Any]:
    template: dict[str, Any] = {
        "name": content["template"],
        "language": {"code": content.get("language") or "en_US"},
    }
    variables = content.get("variables") or []
    if variables:
        template["components"] = [
            {"type": "body", "parameters": [{"type": "text", "text": str(value)} for value in variables]}
        ]
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": destination.lstrip("+"),
        "type": "template",
        "template": template,
    }


@register_adapter
class WhatsAppCloudAdapter(ChannelAdapter):
    channel = "whatsapp"
    provider = "cloudapi"
    max_batch_size = 100

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        require(credentials, "access_token", "app_secret")
        if not str(settings.get("phone_number_id") or "").strip():
            raise ConfigError("settings need the WhatsApp phone_number_id", field="phone_number_id")
        check_api_url(settings)
        connector_timeout(settings)

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.session = new_session()
        self.session.headers["Authorization"] = f"Bearer {config.credentials.get('access_token', '')}"
        self.timeout = connector_timeout(config.settings)
        base = (config.settings.get("api_url") or GRAPH_API_URL).rstrip("/")
        self.url = f"{base}/{config.settings.get('phone_number_id')}/messages"

    def close(self) -> None:
        self.session.close()

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        return [self._send_one(message) for message in messages]

    def _send_one(self, message: OutboundMessage) -> SendResult:
        if not message.content.get("template"):
            return SendResult.permanent("template_required", "WhatsApp needs an approved template name")
        response = post(
            self.session, self.url, timeout=self.timeout, json=template_payload(message.destination, message.content)
        )
        if isinstance(response, SendResult):
            return response
        body = json_or_empty(response)
        if 200 <= response.status_code < 300:
            ids = [item.get("id") for item in body.get("messages") or [] if isinstance(item, dict)]
            if ids and ids[0]:
                return SendResult.accepted(str(ids[0]))
            return SendResult.retryable("unreadable_response", "the Cloud API answer had no message id")
        error = body.get("error") if isinstance(body.get("error"), dict) else {}
        code = int(error.get("code") or 0) if str(error.get("code") or "").isdigit() else -1
        text = str(error.get("message") or f"HTTP {response.status_code}")
        if error.get("error_data", {}).get("details") if isinstance(error.get("error_data"), dict) else False:
            text = f"{text}: {error['error_data']['details']}"
        if code in THROTTLE_CODES:
            return classify_status(429, code=str(code), message=text, headers=response.headers)
        if code in TRANSIENT_CODES:
            return classify_status(503, code=str(code), message=text, headers=response.headers)
        if code in ACCOUNT_CODES:
            return SendResult.permanent(ACCOUNT_SUSPENDED, text)
        if response.status_code == 401 or (code in AUTH_CODES and error.get("type") == "OAuthException"):
            return SendResult.permanent(AUTH_FAILED, text)
        if code in INVALID_RECIPIENT_CODES:
            return SendResult.permanent(str(code), text, destination_invalid=True)
        return classify_status(
            response.status_code, code=str(code) if code > 0 else "", message=text, headers=response.headers
        )
