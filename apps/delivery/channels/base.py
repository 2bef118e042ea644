"""The channel adapter contract. Nothing above an adapter knows a provider's API.

An adapter is built from one connector's resolved configuration and sends a batch of
already-rendered messages, answering one classified ``SendResult`` per message, in order.
Adding a provider means adding one module that subclasses ``ChannelAdapter`` and
registers itself under ``"<channel>:<provider>"``.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from apps.core.registry import Registry


class ConfigError(ValueError):
    """A connector's credentials or settings are unusable; the message says which."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ConnectorConfig:
    """What an adapter needs from a connector, with credentials already decrypted."""

    project_id: int
    channel: str
    provider: str
    credentials: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    connector_id: int | None = None


@dataclass(frozen=True)
class OutboundMessage:
    """One rendered message for one destination.

    ``content`` by channel:
      email    {subject, preheader?, text, html, from_email?, reply_to?, headers{}}
               (a preheader is placed, hidden, at the start of the rendered html)
      push     {title, body, data{}, image?, platform}
      sms      {text}
      whatsapp {template, language, variables[]}
      slack    {text, blocks?}
      teams    {text, card?}
      webhook  {body}
    """

    delivery_id: int
    delivery_key: str  # stable across retries; providers' idempotency key where they have one
    channel: str
    destination: str
    content: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)


class Outcome(enum.StrEnum):
    ACCEPTED = "accepted"
    RETRYABLE = "retryable"
    PERMANENT = "permanent"


@dataclass(frozen=True)
class SendResult:
    outcome: Outcome
    provider_reference: str = ""
    code: str = ""
    message: str = ""
    retry_after: float | None = None
    # A throttling answer (429, SES 454, quota): feeds rate control, always retryable.
    throttled: bool = False
    # Permanent because the destination is gone (unregistered token, invalid address).
    destination_invalid: bool = False
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def accepted(cls, reference: str = "", **kwargs: Any) -> SendResult:
        return cls(Outcome.ACCEPTED, provider_reference=reference, **kwargs)

    @classmethod
    def retryable(cls, code: str, message: str, **kwargs: Any) -> SendResult:
        return cls(Outcome.RETRYABLE, code=code, message=message, **kwargs)

    @classmethod
    def permanent(cls, code: str, message: str, **kwargs: Any) -> SendResult:
        return cls(Outcome.PERMANENT, code=code, message=message, **kwargs)


class ReceiptStatus(enum.StrEnum):
    DELIVERED = "delivered"
    BOUNCED = "bounced"
    COMPLAINED = "complained"
    FAILED = "failed"
    OPENED = "opened"
    CLICKED = "clicked"
    UNSUBSCRIBED = "unsubscribed"


@dataclass(frozen=True)
class ReceiptEvent:
    """A provider's report about a sent message, normalised. Webhook parsers and the
    dry-run adapter both produce these for the one receipt ingest service."""

    provider_event_id: str
    status: ReceiptStatus
    provider_reference: str = ""
    delivery_id: int | None = None
    occurred_at: datetime | None = None
    hard_bounce: bool = False
    description: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict)


class ChannelAdapter(ABC):
    channel: ClassVar[str]
    provider: ClassVar[str]
    # Largest batch the provider accepts in one call (FCM send_each: 500).
    max_batch_size: ClassVar[int] = 500

    def __init__(self, config: ConnectorConfig) -> None:
        self.config = config

    @classmethod
    def validate_config(cls, credentials: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
        """Raise ``ConfigError`` naming the field when a connector cannot work."""

    @abstractmethod
    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        """Send each message; return one result per message, in the same order.

        Never raises for a provider's answer: timeouts, refusals and garbage become
        retryable or permanent results.
        """

    def close(self) -> None:
        """Release connections held across a batch."""


adapters: Registry[type[ChannelAdapter]] = Registry("channel adapter")


def register_adapter(cls: type[ChannelAdapter]) -> type[ChannelAdapter]:
    adapters.add(f"{cls.channel}:{cls.provider}", cls)
    return cls
