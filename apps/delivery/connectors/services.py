"""Connector writes the console needs beyond ``connector_create``: edit, and "send test"."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.core.errors import ApplicationError, NotFound
from apps.delivery.channels.base import ConfigError, OutboundMessage, SendResult, adapters
from apps.delivery.models import Connector
from apps.delivery.services import connector_config

TEST_CONTENT: dict[str, dict[str, Any]] = {
    "email": {
        "subject": "Tidings test message",
        "text": "This is a test message from your Tidings connector.",
        "html": "<p>This is a test message from your Tidings connector.</p>",
    },
    "push": {"title": "Tidings test", "body": "This is a test notification.", "data": {"test": "1"}},
    "sms": {"text": "Tidings test message."},
    # Every WhatsApp Business account starts with Meta's approved "hello_world" template.
    "whatsapp": {"template": "hello_world", "language": "en_US", "variables": []},
    "slack": {"text": "Tidings test message."},
    "teams": {"text": "Tidings test message."},
    "webhook": {"body": {"type": "tidings.test", "message": "This is a test webhook from Tidings."}},
}


def _validated(connector_channel: str, provider: str, credentials: dict[str, Any], settings: dict[str, Any]) -> None:
    try:
        adapters.get(f"{connector_channel}:{provider}").validate_config(credentials, settings)
    except ConfigError as exc:
        raise ApplicationError(str(exc), code="invalid_connector", field=exc.field or "credentials") from exc


@transaction.atomic
def connector_update(
    *,
    connector: Connector,
    name: str,
    credentials: dict[str, Any],
    settings: dict[str, Any],
    is_default: bool,
    secondary: Connector | None,
) -> Connector:
    _validated(connector.channel, connector.provider, credentials, settings)
    if secondary is not None and (
        secondary.project_id != connector.project_id
        or secondary.channel != connector.channel
        or secondary.pk == connector.pk
    ):
        raise NotFound("Secondary connector not found.", code="connector_not_found", field="secondary")
    if is_default and not connector.is_default:
        Connector.objects.for_project(connector.project_id).filter(channel=connector.channel, is_default=True).update(
            is_default=False
        )
    connector.name = name
    connector.settings = settings
    connector.is_default = is_default
    connector.secondary = secondary
    connector.set_credentials(credentials)
    # New credentials deserve a fresh start; the dispatcher marks it failing again if not.
    connector.status = Connector.Status.HEALTHY
    connector.consecutive_failures = 0
    connector.save()
    return connector


def connector_send_test(*, connector: Connector, destination: str) -> SendResult:
    """Send one test message now, through the real adapter, and record the outcome."""
    adapter = adapters.get(f"{connector.channel}:{connector.provider}")(connector_config(connector))
    message = OutboundMessage(
        delivery_id=0,
        delivery_key=f"connector-test:{connector.pk}:{timezone.now().timestamp()}",
        channel=connector.channel,
        destination=destination,
        content=TEST_CONTENT[connector.channel],
    )
    try:
        [result] = adapter.send_batch([message])
    finally:
        adapter.close()
    now = timezone.now()
    if result.outcome == "accepted":
        Connector.objects.filter(pk=connector.pk).update(last_success_at=now)
    else:
        Connector.objects.filter(pk=connector.pk).update(
            last_failure_at=now, last_error=f"test send: {result.code}: {result.message}"[:2000]
        )
    return result
