from __future__ import annotations

import pytest

from apps.delivery.channels.base import adapters
from apps.delivery.demo import seed_demo
from apps.delivery.hooks import deliveries_move_subscriber
from apps.delivery.models import Connector, Delivery, Template
from apps.delivery.services import DeliveryRequest, deliveries_enqueue

pytestmark = pytest.mark.django_db


def test_demo_seed_creates_dry_run_connectors_for_every_channel_once(project):
    first = seed_demo(project)
    again = seed_demo(project)
    assert len(first["connectors"]) == 7
    assert again == first  # idempotent: the same connectors and templates, none added
    connectors = Connector.objects.for_project(project)
    assert set(connectors.values_list("provider", flat=True)) == {"dryrun"}
    assert all(f"{c.channel}:{c.provider}" in adapters for c in connectors)
    assert Template.objects.for_project(project).count() == 4


def test_merge_hook_moves_deliveries_to_the_surviving_subscriber(project, subscribers, other_project):
    anonymous, identified = subscribers[0], subscribers[1]
    (pk,) = deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                "sms", "+351910000001", "normal", "m1", "test", "x", content={"text": "t"}, subscriber_id=anonymous.pk
            )
        ],
    )
    deliveries_move_subscriber(other_project.pk, anonymous.pk, identified.pk)
    assert Delivery.objects.get(pk=pk).subscriber_id == anonymous.pk  # another project's merge touches nothing
    deliveries_move_subscriber(project.pk, anonymous.pk, identified.pk)
    assert Delivery.objects.get(pk=pk).subscriber_id == identified.pk
