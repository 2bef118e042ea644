"""Dry-run adapters: the whole send path up to the network, for all seven channels.

Each builds the payload its real provider library would send (email through Anymail's own
test backend, push through firebase-admin's message encoder, the others as their HTTP
APIs expect), then simulates the provider: latency, throttling, transient and permanent
errors, and later delivered / bounced / complained receipts that come back through
``receipt_ingest`` like real webhooks.

The simulated provider honours idempotency keys the way real ones do: the delivery keys
it has accepted are kept in Redis (one hash per project, with a TTL), so a message
re-sent after a worker crash is answered "accepted" with the original reference and is
not sent again. ``dryrun_sent_counts`` exposes how many times each key really went out.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from django.conf import settings

from apps.delivery.channels import dryrun_payloads as payloads
from apps.delivery.channels.base import (
    ChannelAdapter,
    OutboundMessage,
    ReceiptStatus,
    SendResult,
    register_adapter,
)
from apps.delivery.redis_client import get_redis

KNOB_DEFAULTS: dict[str, Any] = {
    "latency_ms": 0,
    # Time between the provider accepting a batch and its answer arriving: a crash in this
    # window is the case idempotency keys exist for.
    "response_delay_ms": 0,
    "throttle_rate": 0.0,
    "transient_rate": 0.0,
    "permanent_rate": 0.0,
    "bounce_rate": 0.0,
    "complaint_rate": 0.0,
    "delivered_rate": 1.0,
    "receipt_delay_s": 2.0,
    "dedupe_ttl_s": 86400,
    "record_sends": False,
}

# One round trip per batch: for each key, answer the original reference if it was already
# accepted, else accept it now. ARGV: ttl, record flag, then (key, reference) pairs.
_ACCEPT_LUA = """
local out = {}
for i = 3, #ARGV, 2 do
    local existing = redis.call('HGET', KEYS[1], ARGV[i])
    if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[3], ARGV[i], 1) end
    if existing then
        out[#out + 1] = existing
    else
        redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
        if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[2], ARGV[i], 1) end
        out[#out + 1] = ''
    end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
if ARGV[2] == '1' then
    redis.call('EXPIRE', KEYS[2], ARGV[1])
    redis.call('EXPIRE', KEYS[3], ARGV[1])
end
return out
"""


def _keys(project_id: int) -> list[str]:
    base = f"tidings:dryrun:{project_id}"
    return [f"{base}:accepted", f"{base}:sent", f"{base}:requests"]


def dryrun_sent_counts(project_id: int) -> dict[str, int]:
    """How many times the simulated provider really sent each delivery key (record_sends on)."""
    return {k.decode(): int(v) for k, v in get_redis().hgetall(_keys(project_id)[1]).items()}


def dryrun_request_counts(project_id: int) -> dict[str, int]:
    """How many send requests the simulated provider received per key, duplicates included."""
    return {k.decode(): int(v) for k, v in get_redis().hgetall(_keys(project_id)[2]).items()}


def dryrun_reset(project_id: int) -> None:
    get_redis().delete(*_keys(project_id))


class DryRunAdapter(ChannelAdapter):
    provider: ClassVar[str] = "dryrun"
    max_batch_size: ClassVar[int] = 500

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        defaults = {**KNOB_DEFAULTS, **getattr(settings, "TIDINGS_DRYRUN_DEFAULTS", {})}
        self.knobs = {k: config.settings.get(k, v) for k, v in defaults.items()}
        self.random = random.Random()
        self.last_payloads: list[Any] = []

    def build(self, message: OutboundMessage) -> Any:
        """The provider payload; raise ``payloads.Invalid`` for what the provider would refuse."""
        raise NotImplementedError

    def send_batch(self, messages: Sequence[OutboundMessage]) -> list[SendResult]:
        results: list[SendResult | None] = [None] * len(messages)
        candidates: list[int] = []
        self.last_payloads = []
        for index, message in enumerate(messages):
            try:
                self.last_payloads.append(self.build(message))
            except payloads.Invalid as exc:
                results[index] = SendResult.permanent(exc.code, str(exc), destination_invalid=exc.destination)
                continue
            candidates.append(index)
        if self.knobs["latency_ms"]:
            time.sleep(float(self.knobs["latency_ms"]) / 1000)  # the provider call, once per batch
        accepted: list[int] = []
        for index in candidates:
            draw = self.random.random()
            throttle, transient = float(self.knobs["throttle_rate"]), float(self.knobs["transient_rate"])
            if draw < throttle:
                results[index] = SendResult.retryable("429", "simulated throttling", throttled=True, retry_after=1.0)
            elif draw < throttle + transient:
                results[index] = SendResult.retryable("503", "simulated transient error")
            elif draw < throttle + transient + float(self.knobs["permanent_rate"]):
                results[index] = SendResult.permanent("rejected", "simulated permanent rejection")
            else:
                accepted.append(index)
        if accepted:
            self._accept([messages[i] for i in accepted], [results, accepted])
        if self.knobs["response_delay_ms"]:
            time.sleep(float(self.knobs["response_delay_ms"]) / 1000)
        return [r if r is not None else SendResult.retryable("internal", "no result") for r in results]

    def _accept(self, messages: list[OutboundMessage], target: list[Any]) -> None:
        results, indexes = target
        argv: list[Any] = [int(self.knobs["dedupe_ttl_s"]), "1" if self.knobs["record_sends"] else "0"]
        # 128 random bits per reference, as uuid4 gives, drawn once for the whole batch.
        noise = os.urandom(16 * len(messages)).hex()
        references = [f"dryrun-{noise[i : i + 32]}" for i in range(0, len(noise), 32)]
        for message, reference in zip(messages, references, strict=True):
            argv += [message.delivery_key, reference]
        keys = _keys(self.config.project_id)
        answers = get_redis().eval(_ACCEPT_LUA, 3, *keys, *argv)
        receipts: list[dict[str, Any]] = []
        for index, message, reference, answer in zip(indexes, messages, references, answers, strict=True):
            if answer:
                results[index] = SendResult.accepted(answer.decode(), code="duplicate", message="already accepted")
                continue
            results[index] = SendResult.accepted(reference)
            receipt = self._receipt_for(message, reference)
            if receipt is not None:
                receipts.append(receipt)
        if receipts:
            from apps.delivery.tasks import dryrun_receipts

            dryrun_receipts.apply_async(
                args=[self.config.project_id, self.config.connector_id, receipts],
                countdown=float(self.knobs["receipt_delay_s"]),
            )

    def _receipt_for(self, message: OutboundMessage, reference: str) -> dict[str, Any] | None:
        draw = self.random.random()
        bounce, complaint = float(self.knobs["bounce_rate"]), float(self.knobs["complaint_rate"])
        if draw < bounce:
            status, hard = ReceiptStatus.BOUNCED, True
        elif draw < bounce + complaint:
            status, hard = ReceiptStatus.COMPLAINED, False
        elif draw < bounce + complaint + float(self.knobs["delivered_rate"]):
            status, hard = ReceiptStatus.DELIVERED, False
        else:
            return None
        return {
            "provider_event_id": f"{reference}:{status}",
            "status": str(status),
            "provider_reference": reference,
            "delivery_id": message.delivery_id,
            "hard_bounce": hard,
            "description": f"simulated {status}",
        }


@register_adapter
class DryRunEmail(DryRunAdapter):
    channel = "email"

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.backend = payloads.DryRunEmailBackend(**dict(config.settings.get("anymail", {})))
        self.from_email = config.settings.get("from_email", "Tidings <no-reply@tidings.test>")

    def build(self, message: OutboundMessage) -> Any:
        return payloads.email_payload(self.backend, message, self.from_email)


@register_adapter
class DryRunPush(DryRunAdapter):
    channel = "push"

    def build(self, message: OutboundMessage) -> Any:
        return payloads.push_payload(message)


@register_adapter
class DryRunSms(DryRunAdapter):
    channel = "sms"

    def build(self, message: OutboundMessage) -> Any:
        return payloads.sms_payload(message, self.config.settings.get("sender", "Tidings"))


@register_adapter
class DryRunWhatsApp(DryRunAdapter):
    channel = "whatsapp"

    def build(self, message: OutboundMessage) -> Any:
        return payloads.whatsapp_payload(message)


@register_adapter
class DryRunSlack(DryRunAdapter):
    channel = "slack"

    def build(self, message: OutboundMessage) -> Any:
        return payloads.slack_payload(message)


@register_adapter
class DryRunTeams(DryRunAdapter):
    channel = "teams"

    def build(self, message: OutboundMessage) -> Any:
        return payloads.teams_payload(message)


@register_adapter
class DryRunWebhook(DryRunAdapter):
    channel = "webhook"

    def build(self, message: OutboundMessage) -> Any:
        secret: Mapping[str, Any] = self.config.credentials
        return payloads.webhook_payload(message, str(secret.get("signing_secret", "dryrun-secret")))
