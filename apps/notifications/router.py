"""The router: turns outbox events into deliveries, one per channel and destination.

Relaying is idempotent: every delivery key is derived from the notification, the channel
and the destination, and ``deliveries_enqueue`` inserts with ON CONFLICT DO NOTHING, so a
relay that runs twice (a crash after enqueue, before marking the event) creates nothing new.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from apps.delivery.keys import delivery_key as address_key
from apps.delivery.services import DeliveryRequest, deliveries_enqueue
from apps.notifications.destinations import channel_destination_for_raw
from apps.notifications.models import Notification, OutboxEvent
from apps.projects.models import Project
from apps.subscribers.models import Device, Subscriber

RELAY_BATCH = 500
# The sweeper leaves fresh rows to the wake-up that is surely on its way.
SWEEP_GRACE = timedelta(seconds=10)


def delivery_key(prefix: str, channel: str, destination: str) -> str:
    return address_key(f"{prefix}:{channel}", destination)


def subscriber_destinations(subscriber: Subscriber, channel: str, tokens: dict[int, list[str]]) -> list[str]:
    """Where a subscriber is reached on ``channel``; empty when they cannot be."""
    if channel == "email":
        return [subscriber.email] if subscriber.email else []
    if channel in ("sms", "whatsapp"):
        return [subscriber.phone] if subscriber.phone else []
    if channel == "push":
        return tokens.get(subscriber.pk, [])
    url = (subscriber.attributes or {}).get(f"{channel}_url")
    return [url] if isinstance(url, str) and url else []


def _load_subscribers(project: Project, notifications: list[Notification]) -> tuple[dict, dict[int, list[str]]]:
    external_ids = {r["subscriber"] for n in notifications for r in n.recipients if "subscriber" in r}
    if not external_ids:
        return {}, {}
    subscribers = {
        s.external_id: s
        for s in Subscriber.objects.for_project(project)
        .filter(external_id__in=external_ids, erased_at__isnull=True)
        .only("id", "external_id", "email", "phone", "attributes")
    }
    tokens: dict[int, list[str]] = {}
    if any("push" in n.channels for n in notifications) and subscribers:
        rows = (
            Device.objects.for_project(project)
            .filter(subscriber_id__in=[s.pk for s in subscribers.values()], active=True)
            .order_by("id")
            .values_list("subscriber_id", "token")
        )
        for subscriber_id, token in rows:
            tokens.setdefault(subscriber_id, []).append(token)
    return subscribers, tokens


def notification_requests(
    notification: Notification, subscribers: dict[str, Subscriber], tokens: dict[int, list[str]]
) -> tuple[list[DeliveryRequest], list[dict[str, str]]]:
    requests: list[DeliveryRequest] = []
    skipped: list[dict[str, str]] = []
    prefix = f"notification:{notification.pk}"
    for recipient in notification.recipients:
        external_id = recipient.get("subscriber")
        subscriber = subscribers.get(external_id) if external_id else None
        for channel in notification.channels:
            if external_id is not None:
                if subscriber is None:
                    skipped.append({"to": external_id, "channel": channel, "reason": "subscriber no longer exists"})
                    continue
                destinations = subscriber_destinations(subscriber, channel, tokens)
                if not destinations:
                    skipped.append({"to": external_id, "channel": channel, "reason": f"no {channel} destination"})
                    continue
            else:
                destination = channel_destination_for_raw(recipient, channel)
                if destination is None:
                    continue  # e.g. an e-mail address when the notification also goes by SMS
                destinations = [destination]
            for destination in destinations:
                requests.append(
                    DeliveryRequest(
                        channel=channel,
                        destination=destination,
                        lane=notification.priority,
                        delivery_key=delivery_key(prefix, channel, destination),
                        origin_kind="notification",
                        origin_id=str(notification.pk),
                        template_version_id=notification.template_version_id,
                        context=notification.data,
                        subscriber_id=subscriber.pk if subscriber else None,
                        due_at=notification.send_at,
                    )
                )
    return requests, skipped


def outbox_relay(*, project: Project, lane: str | None = None, limit: int = RELAY_BATCH) -> int:
    """Relay up to ``limit`` pending outbox events of ``project``; returns how many."""
    with transaction.atomic():
        pending = OutboxEvent.objects.for_project(project).filter(relayed_at__isnull=True)
        if lane is not None:
            pending = pending.filter(lane=lane)
        events = list(
            pending.select_for_update(skip_locked=True, of=("self",))
            .select_related("notification")
            .order_by("id")[:limit]
        )
        if not events:
            return 0
        notifications = [event.notification for event in events]
        subscribers, tokens = _load_subscribers(project, notifications)
        all_requests: list[DeliveryRequest] = []
        now = timezone.now()
        for notification in notifications:
            requests, skipped = notification_requests(notification, subscribers, tokens)
            all_requests += requests
            notification.state = Notification.State.ROUTED
            notification.routed_at = now
            notification.routing = {"deliveries": len(requests), "skipped": skipped}
        if all_requests:
            deliveries_enqueue(project=project, requests=all_requests)
        notifications_mark_routed(project=project, notifications=notifications, now=now)
        OutboxEvent.objects.filter(pk__in=[e.pk for e in events]).update(
            relayed_at=now, relay_attempts=F("relay_attempts") + 1
        )
    return len(events)


# One statement for a whole batch: bulk_update's CASE per row and field cost most of a
# relay's CPU (about 10 ms of ORM expression building per notification).
_MARK_ROUTED_SQL = """
UPDATE notifications_notification AS n SET state = %(state)s, routed_at = %(now)s, routing = v.routing
FROM jsonb_to_recordset(%(rows)s::jsonb) AS v(id bigint, routing jsonb)
WHERE n.id = v.id AND n.project_id = %(project)s
"""


def notifications_mark_routed(*, project: Project, notifications: list[Notification], now: datetime) -> None:
    """Store each notification's routing (state and routed_at are already set on them)."""
    rows = json.dumps([{"id": n.pk, "routing": n.routing} for n in notifications], cls=DjangoJSONEncoder)
    with connection.cursor() as cursor:
        cursor.execute(
            _MARK_ROUTED_SQL,
            {"state": Notification.State.ROUTED.value, "now": now, "rows": rows, "project": project.pk},
        )


def outbox_sweep(*, grace: timedelta = SWEEP_GRACE) -> int:
    """Relay every event a wake-up should have relayed by now (lost message, dead worker)."""
    cutoff = timezone.now() - grace
    stale: list[dict[str, Any]] = list(
        OutboxEvent.objects.filter(relayed_at__isnull=True, created_at__lt=cutoff)
        .values("project_id", "lane")
        .distinct()
    )
    relayed = 0
    for row in stale:
        project = Project.objects.filter(pk=row["project_id"]).first()
        if project is None:
            continue
        while count := outbox_relay(project=project, lane=row["lane"]):
            relayed += count
    return relayed
