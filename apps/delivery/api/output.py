"""How deliveries, attempts and events look in the API (shared by every origin's views)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apps.delivery.models import Attempt, Delivery, DeliveryEvent


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def attempt_dict(attempt: Attempt) -> dict[str, Any]:
    return {
        "number": attempt.number,
        "started_at": _iso(attempt.started_at),
        "finished_at": _iso(attempt.finished_at),
        "outcome": attempt.outcome or "in_flight",
        "provider_code": attempt.provider_code,
        "provider_message": attempt.provider_message,
        "latency_ms": attempt.latency_ms,
    }


def event_dict(event: DeliveryEvent) -> dict[str, Any]:
    return {"state": event.state, "reason": event.reason, "at": _iso(event.at)}


def delivery_dict(
    delivery: Delivery,
    attempts: Iterable[Attempt] | None = None,
    events: Iterable[DeliveryEvent] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": delivery.pk,
        "channel": delivery.channel,
        "destination": delivery.destination,
        "subscriber_id": delivery.subscriber_id,
        "origin": {"kind": delivery.origin_kind, "id": delivery.origin_id},
        "template_version_id": delivery.template_version_id,
        "lane": delivery.lane,
        "state": delivery.state,
        "state_reason": delivery.state_reason,
        "category": delivery.category,
        "due_at": _iso(delivery.due_at),
        "attempts": delivery.attempts,
        "attempt_budget": delivery.attempt_budget,
        "provider_reference": delivery.provider_reference,
        "last_error": delivery.last_error,
        "created_at": _iso(delivery.created_at),
        "updated_at": _iso(delivery.updated_at),
        "sent_at": _iso(delivery.sent_at),
    }
    if attempts is not None:
        body["attempt_log"] = [attempt_dict(a) for a in attempts]
    if events is not None:
        body["events"] = [event_dict(e) for e in events]
    return body


def deliveries_with_history(deliveries: list[Delivery]) -> list[dict[str, Any]]:
    """Each delivery with its attempts and events: three queries whatever the count."""
    ids = [d.pk for d in deliveries]
    attempts: dict[int, list[Attempt]] = {}
    events: dict[int, list[DeliveryEvent]] = {}
    if ids:
        for attempt in Attempt.objects.filter(delivery_id__in=ids).order_by("delivery_id", "number"):
            attempts.setdefault(attempt.delivery_id, []).append(attempt)
        for event in DeliveryEvent.objects.filter(delivery_id__in=ids).order_by("delivery_id", "id"):
            events.setdefault(event.delivery_id, []).append(event)
    return [delivery_dict(d, attempts.get(d.pk, []), events.get(d.pk, [])) for d in deliveries]
