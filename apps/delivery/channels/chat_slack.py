"""Slack: a bot token calling ``chat.postMessage`` (Block Kit), or an incoming webhook.

Slack's Web API answers HTTP 200 with ``{"ok": false, "error": ...}`` for most
failures, so classification reads the error string, not the status.
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
)
from ._netguard import UnsafeURL, check_url
from .base import ChannelAdapter, ConfigError, OutboundMessage, SendResult, register_adapter

SLACK_API_URL = "https://slack.com/api"
AUTH_ERRORS = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "no_permission", "missing_scope"}
ACCOUNT_ERRORS = {"account_inactive", "team_access_not_granted", "ekm_access_denied"}
DESTINATION_ERRORS = {
    "channel_not_found",
    "is_archived",
    "not_in_channel",
    "user_not_found",
    "channel_is_archived",
    "no_service",
}
TRANSIENT_ERRORS = {"internal_error", "fatal_error", "service_unavailable", "request_timeout"}


def slack_result(status: int, error: str, headers: Mapping[str, str]) -> SendResult:
    if error == "ratelimited" or status == 429:
        return classify_status(429, code="ratelimited", message="Slack rate limit", headers=headers)
    if error in AUTH_ERRORS:
        return SendResult.permanent(AUTH_FAILED, f"Slack refused the token: {error}")
    if error in ACCOUNT_ERRORS:
        return SendResult.permanent(ACCOUNT_SUSPENDED, f"Slack workspace unavailable: {error}")
    if error in DESTINATION_ERRORS:
        return SendResult.permanent(error, f"Slack cannot post there: {error}", destination_invalid=True)
    if error in TRANSIENT_ERRORS or status >= 500:
        return classify_status(503, code=error or f"http_{status}", message=f"Slack error: {error}", headers=headers)
    return SendResult.permanent(error or f"http_{status}", f"Slack refused the message: {error or status}")


@register_adapter
class SlackAdapter(ChannelAdapter):
    channel = "slack"
    provider = "slack"
    max_batch_size = 50

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        token, webhook = credentials.get("bot_token"), credentials.get("webhook_url")
        if not token and not webhook:
            raise ConfigError("give a bot_token (xoxb-...) or an incoming webhook_url", field="bot_token")
        if token and not str(token).startswith(("xoxb-", "xoxp-")):
            raise ConfigError("a Slack bot token starts with xoxb-", field="bot_token")
        if webhook:
            try:
                check_url(str(webhook))
            except UnsafeURL as exc:
                raise ConfigError(str(exc), field="webhook_url") from None
        check_api_url(settings)
        connector_timeout(settings)

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.session = new_session()
        self.timeout = connector_timeout(config.settings)
        self.token = config.credentials.get("bot_token") or ""
        self.webhook_url = config.credentials.get("webhook_url") or ""
        if self.token:
            self.session.headers["Authorization"] = f"Bearer {self.token}"

    def close(self) -> None:
        self.session.close()

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        return [self._send_one(message) for message in messages]

    def _payload(self, message: OutboundMessage) -> dict[str, Any]:
        payload: dict[str, Any] = {"text": message.content.get("text", "")}
        if message.content.get("blocks"):
            payload["blocks"] = message.content["blocks"]
        return payload

    def _send_one(self, message: OutboundMessage) -> SendResult:
        if self.token:
            base = (self.config.settings.get("api_url") or SLACK_API_URL).rstrip("/")
            payload = {
                "channel": message.destination or self.config.settings.get("channel", ""),
                **self._payload(message),
            }
            response = post(self.session, f"{base}/chat.postMessage", timeout=self.timeout, json=payload)
            if isinstance(response, SendResult):
                return response
            body = json_or_empty(response)
            if response.status_code == 200 and body.get("ok"):
                return SendResult.accepted(f"{body.get('channel', '')}:{body.get('ts', '')}")
            return slack_result(response.status_code, str(body.get("error") or ""), response.headers)
        try:
            check_url(self.webhook_url)
        except UnsafeURL as exc:
            return SendResult.permanent("unsafe_url", str(exc))
        response = post(self.session, self.webhook_url, timeout=self.timeout, json=self._payload(message))
        if isinstance(response, SendResult):
            return response
        if response.status_code == 200:
            # Incoming webhooks answer a bare "ok" and no message id.
            return SendResult.accepted("")
        return slack_result(response.status_code, response.text.strip()[:100], response.headers)
