"""Microsoft Teams through an incoming webhook (Workflows or a classic connector),
posting an Adaptive Card. The webhook URL carries its own signature, so it is a
credential."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._http import classify_status, connector_timeout, new_session, post, response_details
from ._netguard import UnsafeURL, check_url
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"


def adaptive_card(content: Mapping[str, Any]) -> dict[str, Any]:
    if content.get("card"):
        return dict(content["card"])
    return {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [{"type": "TextBlock", "text": content.get("text", ""), "wrap": True}],
    }


@register_adapter
class TeamsAdapter(ChannelAdapter):
    channel = "teams"
    provider = "teams"
    max_batch_size = 50

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        url = credentials.get("webhook_url")
        if not isinstance(url, str) or not url:
            raise ConfigError("credentials need the Teams incoming webhook_url", field="webhook_url")
        try:
            check_url(url)
        except UnsafeURL as exc:
            raise ConfigError(str(exc), field="webhook_url") from None
        connector_timeout(settings)

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.session = new_session()
        self.timeout = connector_timeout(config.settings)
        self.url = config.credentials.get("webhook_url") or ""

    def close(self) -> None:
        self.session.close()

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        try:
            check_url(self.url)
        except UnsafeURL as exc:
            return [SendResult.permanent("unsafe_url", str(exc)) for _ in messages]
        return [self._send_one(message) for message in messages]

    def _send_one(self, message: OutboundMessage) -> SendResult:
        payload = {
            "type": "message",
            "attachments": [
                {"contentType": ADAPTIVE_CARD, "contentUrl": None, "content": adaptive_card(message.content)}
            ],
        }
        response = post(self.session, self.url, timeout=self.timeout, json=payload)
        if isinstance(response, SendResult):
            return response
        text = response.text.strip()
        if response.status_code == 200 and "returned HTTP error" in text:
            # Classic connectors wrap the real failure in a 200, e.g.
            # "Microsoft Teams endpoint returned HTTP error 429 with ContextId ...".
            status = 429 if " 429" in text else 503
            return classify_status(status, message=text[:200], headers=response.headers)
        if 200 <= response.status_code < 300:
            # Teams webhooks return no message id ("1" or an empty 202).
            return SendResult.accepted("", details={"status": response.status_code})
        return classify_status(
            response.status_code,
            message=f"Teams answered HTTP {response.status_code}: {response.text[:200]}",
            headers=response.headers,
            details=response_details(response),
        )
