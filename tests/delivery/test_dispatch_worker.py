"""The dispatcher through real Celery worker processes, Postgres and Redis."""

from __future__ import annotations

import itertools
import time

import pytest
from django.utils import timezone

from apps.delivery.channels.dryrun import dryrun_request_counts, dryrun_sent_counts
from apps.delivery.dispatch import sweep
from apps.delivery.models import Attempt, Delivery
from apps.delivery.services import DeliveryRequest, deliveries_enqueue
from tests.delivery.conftest import make_connector, redis_clear
from tests.fixtures.worker import wait_for

pytestmark = pytest.mark.worker


@pytest.fixture(autouse=True)
def _clean_redis(transactional_db):
    redis_clear()
    yield


def enqueue(project, count, lane, prefix=None):
    prefix = prefix or lane
    return deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel="email",
                destination=f"{prefix}{i}@example.com",
                lane=lane,
                delivery_key=f"{prefix}:{i}",
                origin_kind="test",
                origin_id=prefix,
                content={"subject": "Hi", "text": "Hello", "html": "<p>Hello</p>"},
            )
            for i in range(count)
        ],
    )


def count(ids, *states):
    return Delivery.objects.filter(pk__in=ids, state__in=states).count()


def test_enqueued_delivery_is_sent_by_the_worker_and_its_receipt_comes_back(project, celery_worker):
    make_connector(project, delivered_rate=1.0, receipt_delay_s=0.2)
    ids = enqueue(project, 3, "high")
    wait_for(lambda: count(ids, "delivered") == 3, timeout=20, message=celery_worker.log()[-2000:])
    assert Attempt.objects.filter(delivery_id__in=ids, outcome="accepted").count() == 3


def test_high_lane_is_served_while_a_bulk_backlog_is_still_draining(project, start_worker, monkeypatch):
    monkeypatch.setenv("TIDINGS_DISPATCH_BATCH_SIZE", "50")
    make_connector(project, latency_ms=250, delivered_rate=0)
    worker = start_worker(concurrency=2)
    bulk = enqueue(project, 2000, "bulk")
    wait_for(lambda: count(bulk, "sent") > 0, timeout=20, message=worker.log()[-2000:])
    started = time.monotonic()
    high = enqueue(project, 20, "high")
    wait_for(lambda: count(high, "sent") == 20, timeout=20, message=worker.log()[-2000:])
    assert time.monotonic() - started < 3
    assert count(bulk, "queued") > 0, "bulk finished first: the test proved nothing about starvation"
    wait_for(lambda: count(bulk, "sent") == 2000, timeout=120)


def test_rate_limited_deliveries_are_deferred_and_all_sent_none_failed(project, celery_worker):
    make_connector(project, rate_per_second=20, delivered_rate=0)
    ids = enqueue(project, 60, "normal")
    wait_for(lambda: count(ids, "sent") == 60, timeout=30, message=celery_worker.log()[-2000:])
    sent = sorted(Delivery.objects.filter(pk__in=ids).values_list("sent_at", flat=True))
    # 20 in the initial burst, then 20/s: the last ones cannot go before ~2 s.
    assert (sent[-1] - sent[0]).total_seconds() >= 1.5
    assert not Attempt.objects.filter(delivery_id__in=ids).exclude(outcome="accepted").exists()


def test_worker_killed_mid_batch_every_delivery_is_sent_exactly_once(project, start_worker, monkeypatch):
    monkeypatch.setenv("TIDINGS_DISPATCH_BATCH_SIZE", "40")
    monkeypatch.setenv("TIDINGS_DISPATCH_CLAIM_TTL_SECONDS", "5")
    # The provider accepts, then takes 2 s to answer: a kill in that window leaves
    # accepted messages that our ledger still sees as claimed.
    make_connector(project, response_delay_ms=2000, delivered_rate=0, record_sends=True)
    first = start_worker(queues=["bulk", "default"], concurrency=2)
    ids = enqueue(project, 200, "bulk")
    wait_for(lambda: Attempt.objects.filter(delivery_id__in=ids, outcome="").exists(), timeout=20)
    time.sleep(0.8)  # inside the response window of the first batches
    first.kill()
    in_flight = Delivery.objects.filter(pk__in=ids, state="claimed").count()
    assert in_flight > 0, "nothing was in flight when the worker died"

    start_worker(queues=["bulk", "default"], concurrency=2)

    def recovered() -> bool:
        sweep()  # what beat does every few seconds
        return count(ids, "sent") == 200

    wait_for(recovered, timeout=90, interval=1.0)
    keys = set(Delivery.objects.filter(pk__in=ids).values_list("delivery_key", flat=True))
    sent = dryrun_sent_counts(project.pk)
    assert set(sent) == keys and set(sent.values()) == {1}, "a delivery went out twice or never"
    requests = dryrun_request_counts(project.pk)
    assert any(n >= 2 for n in requests.values()), "no re-send happened: the crash was not mid-send"
    assert Attempt.objects.filter(delivery_id__in=ids, outcome="lost").count() >= in_flight
    assert not Delivery.objects.filter(pk__in=ids, claimed_until__gt=timezone.now()).exists()


def test_transient_errors_retry_with_backoff_then_dead_letter_and_permanent_ones_at_once(
    project, other_project, start_worker, monkeypatch
):
    monkeypatch.setenv("TIDINGS_RETRY_BASE_MS", "200")
    make_connector(project, transient_rate=1.0, delivered_rate=0)
    make_connector(other_project, permanent_rate=1.0, delivered_rate=0)
    worker = start_worker(concurrency=1)
    transient = deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                "email", "t@example.com", "normal", "t", "test", "t", content={"text": "x"}, attempt_budget=3
            )
        ],
    )
    permanent = enqueue(other_project, 1, "normal", prefix="p")
    wait_for(lambda: count(permanent, "failed") == 1, timeout=20, message=worker.log()[-2000:])
    assert Attempt.objects.filter(delivery_id__in=permanent).count() == 1
    wait_for(lambda: count(transient, "failed") == 1, timeout=30, message=worker.log()[-2000:])
    attempts = list(Attempt.objects.filter(delivery_id__in=transient).order_by("number"))
    assert [a.outcome for a in attempts] == ["retryable"] * 3
    gaps = [(b.started_at - a.started_at).total_seconds() for a, b in itertools.pairwise(attempts)]
    assert gaps[0] >= 0.2 and gaps[1] >= 0.4  # base·2^n (+ jitter) between tries
    dead = Delivery.objects.get(pk=transient[0])
    assert "exhausted 3 attempts" in dead.last_error and dead.payload_snapshot["content"] == {"text": "x"}


def test_scheduled_send_stays_in_postgres_and_leaves_when_due_without_beat(project, celery_worker):
    from datetime import timedelta

    make_connector(project, delivered_rate=0)
    due = timezone.now() + timedelta(seconds=3)
    (pk,) = deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                "email", "later@example.com", "normal", "later", "test", "s", content={"text": "t"}, due_at=due
            )
        ],
    )
    time.sleep(1.5)
    assert Delivery.objects.get(pk=pk).state == "scheduled"
    wait_for(lambda: count([pk], "sent"), timeout=15, message=celery_worker.log()[-2000:])
    assert Delivery.objects.get(pk=pk).sent_at >= due
