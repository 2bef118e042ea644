"""The bulk lane is shared between projects: each claim takes an equal share from each."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from apps.delivery.dispatch import claim
from apps.delivery.dispatch.claim import claim_batch
from apps.delivery.models import Delivery
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_walk() -> Any:
    claim.bulk_walk_reset()
    yield
    claim.bulk_walk_reset()


def bulk_rows(project: Any, count: int, *, due_in: timedelta = timedelta(0), prefix: str = "c") -> list[int]:
    due = timezone.now() + due_in - timedelta(seconds=1)
    rows = [
        Delivery(
            project=project,
            channel="email",
            destination=f"{prefix}{i}@example.com",
            origin_kind="campaign",
            origin_id="1",
            content={"subject": "s", "text": "t"},
            lane="bulk",
            due_at=due,
            delivery_key=f"campaign:1:{prefix}{i}",
        )
        for i in range(count)
    ]
    return [row.pk for row in Delivery.objects.bulk_create(rows)]


def test_a_campaign_fanned_out_later_still_gets_half_the_lane() -> None:
    first, second = ProjectFactory(), ProjectFactory()
    bulk_rows(first, 3000)  # every one of these has a lower id than the second's
    bulk_rows(second, 3000)

    served: Counter[int] = Counter()
    for _ in range(20):
        _, rows = claim_batch("bulk", limit=100, ttl_seconds=60)
        served.update(row.project_id for row in rows)
    total = sum(served.values())
    assert total == 2000
    assert 0.4 <= served[first.pk] / total <= 0.6
    assert 0.4 <= served[second.pk] / total <= 0.6


def test_one_project_alone_gets_the_whole_batch_in_id_order() -> None:
    project = ProjectFactory()
    ids = bulk_rows(project, 250)
    _, rows = claim_batch("bulk", limit=100, ttl_seconds=60)
    _, more = claim_batch("bulk", limit=100, ttl_seconds=60)
    assert [row.id for row in rows + more] == ids[:200]


def test_a_project_whose_rows_are_not_due_leaves_its_share_to_the_others() -> None:
    waiting, busy = ProjectFactory(), ProjectFactory()
    bulk_rows(waiting, 50, due_in=timedelta(minutes=5), prefix="w")
    bulk_rows(busy, 300, prefix="b")
    claimed = [row for _ in range(3) for row in claim_batch("bulk", limit=100, ttl_seconds=60)[1]]
    assert {row.project_id for row in claimed} == {busy.pk}
    # The second and third claims were whole: the waiting project rested instead of taking a share.
    assert len(claimed) >= 250


def test_a_row_put_back_behind_the_cursor_is_claimed_on_the_wrap() -> None:
    project = ProjectFactory()
    ids = bulk_rows(project, 30)
    _, rows = claim_batch("bulk", limit=20, ttl_seconds=60)
    assert [row.id for row in rows] == ids[:20]
    # A retry puts an early row back, behind this process's cursor.
    Delivery.objects.filter(pk=ids[0]).update(state="retrying", claim_token=None)
    _, rest = claim_batch("bulk", limit=20, ttl_seconds=60)
    _, wrap = claim_batch("bulk", limit=20, ttl_seconds=60)
    assert [row.id for row in rest] == ids[20:]
    assert [row.id for row in wrap] == [ids[0]]


def test_the_bulk_claim_and_the_project_scan_use_the_bulk_index() -> None:
    # A table as a campaign leaves it: most bulk rows sent, a few thousand still waiting.
    project, other = ProjectFactory(), ProjectFactory()
    sent = bulk_rows(project, 20_000)
    Delivery.objects.filter(pk__in=sent[:18_000]).update(state="sent")
    bulk_rows(other, 1000, prefix="o")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE delivery_delivery")
        cursor.execute("EXPLAIN " + claim.BULK_PROJECTS)
        scan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(
            "EXPLAIN " + claim.CLAIM_BULK_FAIRLY,
            {
                "ttl": 60,
                "token": 1,
                "projects": [project.pk],
                "after": [0],
                "share": 10,
                "alone_from": 2,
            },
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "delivery_bulk_claimable" in scan, scan
    assert "delivery_bulk_claimable" in plan, plan
