from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core.errors import ApplicationError, NotFound
from apps.delivery.channels.base import ReceiptEvent, ReceiptStatus
from apps.delivery.models import Delivery, DeliveryEvent, Receipt, Suppression
from apps.delivery.origins import origin_listeners
from apps.delivery.services import (
    DeliveryRequest,
    connector_resolve,
    deliveries_cancel,
    deliveries_enqueue,
    deliveries_enqueue_for_subscribers,
    receipt_ingest,
    suppression_add,
)
from tests.delivery.conftest import make_connector

pytestmark = pytest.mark.django_db


def request(key: str, version_id: int | None = None, **kwargs) -> DeliveryRequest:
    defaults = {
        "channel": "email",
        "destination": f"{key}@example.com",
        "lane": "normal",
        "delivery_key": key,
        "origin_kind": "notification",
        "origin_id": "n1",
        "template_version_id": version_id,
        "content": None if version_id else {"subject": "s", "text": "t"},
    }
    defaults.update(kwargs)
    return DeliveryRequest(**defaults)


def test_enqueue_is_idempotent_on_delivery_key_and_returns_ids_in_request_order(project, email_version):
    first = deliveries_enqueue(project=project, requests=[request("a", email_version.pk), request("b")])
    again = deliveries_enqueue(project=project, requests=[request("c"), request("b"), request("a", email_version.pk)])
    assert again[1:] == [first[1], first[0]]
    assert Delivery.objects.for_project(project).count() == 3
    # One creation event per delivery, none for the repeated requests.
    assert DeliveryEvent.objects.filter(project=project, state="queued").count() == 3


def test_enqueue_with_future_due_time_is_scheduled(project):
    later = timezone.now() + timedelta(hours=1)
    (pk,) = deliveries_enqueue(project=project, requests=[request("s", due_at=later)])
    delivery = Delivery.objects.get(pk=pk)
    assert delivery.state == "scheduled" and delivery.due_at == later


def test_enqueue_refuses_another_projects_version_and_stores_nothing(project, other_project, email_version):
    with pytest.raises(NotFound):
        deliveries_enqueue(project=other_project, requests=[request("x", email_version.pk)])
    assert not Delivery.objects.exists()


def test_enqueue_refuses_a_channel_the_version_lacks(project, email_version):
    with pytest.raises(ApplicationError) as err:
        deliveries_enqueue(project=project, requests=[request("p", email_version.pk, channel="push")])
    assert err.value.code == "template_lacks_channel"


def test_enqueue_for_subscribers_skips_rows_without_address_and_never_duplicates(project, subscribers, email_version):
    ids_sql = "SELECT id FROM subscribers_subscriber WHERE project_id = %s AND id >= %s"
    args = {
        "project": project,
        "subscriber_ids_sql": ids_sql,
        "params": [project.pk, subscribers[0].pk],
        "channel": "email",
        "lane": "bulk",
        "origin_kind": "campaign",
        "origin_id": "7",
        "template_version_id": email_version.pk,
        "key_prefix": "campaign:7",
    }
    assert deliveries_enqueue_for_subscribers(**args) == 4  # two subscribers have no email
    assert deliveries_enqueue_for_subscribers(**args) == 0
    keys = set(Delivery.objects.for_project(project).values_list("delivery_key", flat=True))
    assert f"campaign:7:{subscribers[1].pk}" in keys and f"campaign:7:{subscribers[0].pk}" not in keys


def test_cancel_touches_only_pending_deliveries_and_tells_the_origin(project):
    seen = []
    name = "test_cancel_origin"
    if name not in origin_listeners:
        origin_listeners.add(name, lambda outcomes: seen.extend(outcomes))
    ids = deliveries_enqueue(
        project=project, requests=[request(f"k{i}", origin_kind=name, origin_id="o1") for i in range(3)]
    )
    Delivery.objects.filter(pk=ids[0]).update(state="sent")
    assert deliveries_cancel(project=project, origin_kind=name, origin_ids=["o1"]) == 2
    assert Delivery.objects.get(pk=ids[0]).state == "sent"
    assert sorted(o.delivery_id for o in seen) == sorted(ids[1:])


def test_suppression_add_is_idempotent_and_case_insensitive_for_email(project):
    assert suppression_add(project=project, channel="email", address="Bob@Example.com", reason="manual") is True
    assert suppression_add(project=project, channel="email", address="bob@example.com", reason="bounce") is False
    assert Suppression.objects.get(project=project).reason == "manual"


def test_receipts_are_idempotent_and_monotonic_and_hard_bounces_suppress(project):
    (pk,) = deliveries_enqueue(project=project, requests=[request("r1")])
    Delivery.objects.filter(pk=pk).update(state="sent", provider_reference="ref-1")
    bounce = ReceiptEvent("ev-1", ReceiptStatus.BOUNCED, provider_reference="ref-1", hard_bounce=True)
    first = receipt_ingest(project_id=project.pk, events=[bounce])
    again = receipt_ingest(project_id=project.pk, events=[bounce])
    late = receipt_ingest(project_id=project.pk, events=[ReceiptEvent("ev-0", ReceiptStatus.DELIVERED, delivery_id=pk)])
    assert (first.recorded, again.duplicates, late.recorded, late.state_changes) == (1, 1, 1, 0)
    assert Delivery.objects.get(pk=pk).state == "bounced"
    assert Receipt.objects.filter(project=project).count() == 2
    assert Suppression.objects.filter(project=project, address="r1@example.com", reason="bounce").exists()


def test_receipt_for_another_projects_delivery_changes_nothing(project, other_project):
    (pk,) = deliveries_enqueue(project=project, requests=[request("r2")])
    Delivery.objects.filter(pk=pk).update(state="sent")
    result = receipt_ingest(
        project_id=other_project.pk, events=[ReceiptEvent("e", ReceiptStatus.BOUNCED, delivery_id=pk)]
    )
    assert result.state_changes == 0
    assert Delivery.objects.get(pk=pk).state == "sent"


def test_receipt_before_the_send_is_recorded_is_returned_as_pending(project):
    (pk,) = deliveries_enqueue(project=project, requests=[request("r3")])
    Delivery.objects.filter(pk=pk).update(state="claimed")
    result = receipt_ingest(project_id=project.pk, events=[ReceiptEvent("e3", ReceiptStatus.DELIVERED, delivery_id=pk)])
    assert len(result.pending) == 1 and not Receipt.objects.exists()


def test_connector_resolve_uses_default_and_fails_over_to_secondary(project, other_project):
    primary = make_connector(project)
    with pytest.raises(NotFound):
        connector_resolve(other_project, "email")
    config = connector_resolve(project, "email")
    assert config.connector_id == primary.pk and config.credentials == {"api_key": "dry-run-key-1234"}
    assert primary.credentials_hint == "1234" and "dry-run" not in primary.credentials_encrypted
    backup = make_connector(project, default=False)
    primary.secondary, primary.status = backup, "failing"
    primary.save()
    assert connector_resolve(project, "email").connector_id == backup.pk
    with pytest.raises(NotFound):
        connector_resolve(other_project, "email", connector_id=primary.pk)


def test_events_are_append_only(project):
    deliveries_enqueue(project=project, requests=[request("ev")])
    with pytest.raises(IntegrityError), transaction.atomic():
        DeliveryEvent.objects.filter(project=project).update(reason="rewritten")


def test_event_rows_keep_tabs_newlines_and_backslashes_in_their_reason(project):
    """Events travel as hand-built COPY text: what needs escaping must arrive unchanged."""
    from apps.delivery.services.common import events_write

    (delivery_id,) = deliveries_enqueue(project=project, requests=[request("copy-text")])
    reason = "provider said:\tline one\nline two\\n is not a newline\r\\"
    at = timezone.now()
    assert events_write([(project.pk, delivery_id, "email", "failed", reason, at)]) == 1
    event = DeliveryEvent.objects.filter(delivery_id=delivery_id, state="failed").get()
    assert (event.reason, event.at, event.channel, event.project_id) == (reason, at, "email", project.pk)
