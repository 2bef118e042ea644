"""Lane weighting 3:2:1, in this process: which lane each successive batch came from."""

from __future__ import annotations

import pytest

from apps.delivery.dispatch import dispatch_lane_run
from apps.delivery.dispatch.prepare import _senders
from apps.delivery.dispatch.runner import lanes_served_by
from apps.delivery.models import Attempt
from apps.delivery.services import DeliveryRequest, deliveries_enqueue
from tests.delivery.conftest import make_connector, redis_clear

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh():
    _senders.items.clear()
    redis_clear()


def enqueue(project, lane, count):
    deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest("email", f"{lane}{i}@example.com", lane, f"{lane}:{i}", "test", "x", content={"text": "t"})
            for i in range(count)
        ],
    )


def batch_lanes(batch_size):
    lanes = list(Attempt.objects.order_by("id").values_list("delivery__lane", flat=True))
    return [lanes[i][0] for i in range(0, len(lanes), batch_size)]


def test_lanes_are_claimed_three_two_one_and_an_empty_lane_passes_its_turn(project, settings):
    settings.TIDINGS_DISPATCH_BATCH_SIZE = 2
    make_connector(project, delivered_rate=0)
    enqueue(project, "high", 8)  # 4 batches
    enqueue(project, "normal", 8)
    enqueue(project, "bulk", 8)
    done = dispatch_lane_run("bulk", seconds=30)
    assert done == {"high": 8, "normal": 8, "bulk": 8}
    # Cycle 1: h h h n n b. Cycle 2: high has one batch left, then passes: h n n b. Then b b.
    assert "".join(batch_lanes(2)) == "hhhnnb" + "hnnb" + "b" + "b"


def test_a_lane_serves_only_itself_and_the_lanes_above_it():
    assert lanes_served_by("high") == [("high", 3)]
    assert lanes_served_by("normal") == [("high", 3), ("normal", 2)]
    assert lanes_served_by("bulk") == [("high", 3), ("normal", 2), ("bulk", 1)]


def test_a_normal_wake_up_never_sends_bulk(project, settings):
    settings.TIDINGS_DISPATCH_BATCH_SIZE = 5
    make_connector(project, delivered_rate=0)
    enqueue(project, "normal", 3)
    enqueue(project, "bulk", 3)
    assert dispatch_lane_run("normal", seconds=10) == {"normal": 3}
