"""The router relays outbox events into deliveries; relaying twice creates nothing new."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.models import Delivery, DeliveryEvent
from apps.notifications.models import Notification, OutboxEvent
from apps.notifications.router import outbox_relay, outbox_sweep
from apps.notifications.services import notification_publish
from apps.subscribers.models import Subscriber

pytestmark = pytest.mark.django_db


def test_relay_makes_one_delivery_per_channel_and_destination(project: Any, welcome: Any, ada: Any) -> None:
    notification = notification_publish(
        project=project,
        template="welcome",
        to=["ada", {"email": "grace@example.com"}, {"phone": "+14155550100"}],
        channels=["email", "sms", "push"],
        priority="high",
        data={"name": "Ada"},
    )

    assert outbox_relay(project=project) == 1

    deliveries = Delivery.objects.filter(origin_kind="notification", origin_id=str(notification.pk))
    keys = sorted(deliveries.values_list("delivery_key", flat=True))
    n = notification.pk
    assert keys == sorted(
        [
            f"notification:{n}:email:ada@example.com",
            f"notification:{n}:sms:+351912345678",
            f"notification:{n}:push:tok-ada-android-1",
            f"notification:{n}:email:grace@example.com",
            f"notification:{n}:sms:+14155550100",
        ]
    )
    assert set(deliveries.values_list("lane", flat=True)) == {"high"}
    assert deliveries.get(destination="ada@example.com").subscriber_id == ada.pk
    assert deliveries.get(destination="grace@example.com").context == {"name": "Ada"}
    notification.refresh_from_db()
    assert notification.state == "routed" and notification.routing["deliveries"] == 5
    assert OutboxEvent.objects.get(notification=notification).relayed_at is not None


def test_relaying_twice_creates_nothing_new(project: Any, welcome: Any, ada: Any) -> None:
    notification = notification_publish(project=project, template="welcome", to=["ada"], channels=["email", "sms"])
    outbox_relay(project=project)
    first = set(Delivery.objects.values_list("id", flat=True))
    events = DeliveryEvent.objects.count()

    # A crash after the enqueue but before the event was marked: the row is relayed again.
    OutboxEvent.objects.filter(notification=notification).update(relayed_at=None)
    assert outbox_relay(project=project) == 1

    assert set(Delivery.objects.values_list("id", flat=True)) == first
    assert DeliveryEvent.objects.count() == events


def test_unreachable_recipients_are_explained_on_the_notification(project: Any, welcome: Any) -> None:
    Subscriber.objects.create(project=project, external_id="no-phone", email="np@example.com")
    notification = notification_publish(project=project, template="welcome", to=["no-phone"], channels=["sms", "email"])
    outbox_relay(project=project)
    notification.refresh_from_db()
    assert notification.routing["deliveries"] == 1
    assert notification.routing["skipped"] == [{"to": "no-phone", "channel": "sms", "reason": "no sms destination"}]


def test_scheduled_notification_becomes_a_scheduled_delivery(project: Any, welcome: Any, ada: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    when = timezone.now() + timedelta(hours=1)
    notification_publish(project=project, template="welcome", to=["ada"], channels=["email"], send_at=when)
    outbox_relay(project=project)
    delivery = Delivery.objects.get()
    assert delivery.state == "scheduled" and delivery.due_at == when


def test_sweeper_relays_events_whose_wake_up_was_lost(project: Any, other_project: Any, welcome: Any, ada: Any) -> None:
    from datetime import timedelta

    notification = notification_publish(project=project, template="welcome", to=["ada"], channels=["email"])
    OutboxEvent.objects.filter(notification=notification).update(
        created_at=notification.created_at - timedelta(minutes=1)
    )
    assert outbox_sweep() == 1
    assert Notification.objects.get(pk=notification.pk).state == "routed"
    assert outbox_sweep() == 0
