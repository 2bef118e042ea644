"""Building adapters and messages in channel tests."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from apps.delivery.channels import providers  # noqa: F401  (registers every adapter)
from apps.delivery.channels.base import ChannelAdapter, ConnectorConfig, OutboundMessage, adapters

_ids = itertools.count(1000)


def make_adapter(
    key: str, credentials: Mapping[str, Any], settings: Mapping[str, Any], *, validate: bool = True
) -> ChannelAdapter:
    channel, provider = key.split(":")
    adapter_class = adapters.get(key)
    if validate:
        adapter_class.validate_config(credentials, settings)
    return adapter_class(
        ConnectorConfig(
            project_id=1, channel=channel, provider=provider, credentials=credentials, settings=settings, connector_id=7
        )
    )


def message(channel: str, destination: str, content: Mapping[str, Any], **kwargs: Any) -> OutboundMessage:
    delivery_id = kwargs.pop("delivery_id", next(_ids))
    return OutboundMessage(
        delivery_id=delivery_id,
        delivery_key=kwargs.pop("delivery_key", f"notification:{channel}:{delivery_id}"),
        channel=channel,
        destination=destination,
        content=content,
        **kwargs,
    )


def email_case_responder(respond: Any) -> Any:
    """A FakeServer responder answering by the marker in the destination, like the contract cases."""
    from tests.channels.fakes import outcome_in

    return lambda request: respond(outcome_in(request.text), request)
