"""The dispatcher's record step: the array fast path for plain sends against the general one."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.utils import timezone

from apps.core.dbcompat import int_array, text_array
from apps.delivery.dispatch.claim import claim_batch
from apps.delivery.dispatch.outcome import RowResult
from apps.delivery.dispatch.record import (
    _attempts_others,
    _record_others,
    _record_sent,
    record_results,
)
from apps.delivery.models import Attempt, Delivery
from apps.delivery.services import DeliveryRequest, deliveries_enqueue

pytestmark = pytest.mark.django_db

DELIVERY_FIELDS = (
    "state",
    "state_reason",
    "attempts",
    "attempt_budget",
    "due_at",
    "last_error",
    "payload_snapshot",
    "sent_at",
    "claimed_until",
    "claim_token",
    "updated_at",
)
ATTEMPT_FIELDS = ("finished_at", "outcome", "provider_code", "provider_message", "latency_ms", "response")


def _claimed(project, count: int):
    deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel="email",
                destination=f"r{i}@example.com",
                lane="normal",
                delivery_key=f"record-{i}",
                origin_kind="record_test",
                origin_id="o1",
                content={"subject": "s", "text": "t"},
            )
            for i in range(count)
        ],
    )
    token, rows = claim_batch("normal", limit=count, ttl_seconds=60)
    assert len(rows) == count
    now = timezone.now()
    for row in rows:
        Attempt.objects.create(project_id=project.pk, delivery_id=row.id, number=row.attempts + 1, started_at=now)
    return token, rows


def _sent(row, reference: str) -> RowResult:
    return RowResult(row, "sent", reference=reference, attempted=True, outcome="accepted", latency_ms=7)


def test_text_array_literal_round_trips_awkward_values():
    values = ['say "hi"', "back\\slash", "NULL", "", "{a,b}", "comma, space ", "é 🙂", "tab\tand\nnewline"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[]", [text_array(values)])
        assert cursor.fetchone()[0] == values


def test_the_plain_sent_path_writes_exactly_what_the_general_path_writes(project):
    token, (first, second) = _claimed(project, 2)
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        fast = _record_sent(cursor, token, [_sent(first, "ref-1")], now)
        general = _record_others(cursor, token, [_sent(second, "ref-2")], now)
        _attempts_others(cursor, [_sent(second, "ref-2")], now)
    from apps.delivery.dispatch.record import UPDATE_ATTEMPTS_ACCEPTED

    with connection.cursor() as cursor:
        cursor.execute(
            UPDATE_ATTEMPTS_ACCEPTED,
            {"now": now, "ids": int_array([first.id]), "numbers": int_array([1]), "latency": int_array([7])},
        )
    assert (fast, general) == ({first.id}, {second.id})
    one, two = (Delivery.objects.values(*DELIVERY_FIELDS, "provider_reference").get(pk=r.id) for r in (first, second))
    assert (one.pop("provider_reference"), two.pop("provider_reference")) == ("ref-1", "ref-2")
    assert one == two and one["state"] == "sent" and one["claim_token"] is None and one["sent_at"] == now
    attempt_one, attempt_two = (Attempt.objects.values(*ATTEMPT_FIELDS).get(delivery_id=r.id) for r in (first, second))
    assert attempt_one == attempt_two == {**attempt_one, "outcome": "accepted", "latency_ms": 7, "finished_at": now}


def test_rows_no_longer_claimed_by_the_batch_are_left_alone_on_both_paths(project):
    token, rows = _claimed(project, 4)
    # Two rows were reclaimed meanwhile (another claim token): this batch must not write them.
    lost = {rows[0].id, rows[2].id}
    Delivery.objects.filter(pk__in=lost).update(claim_token=token + 1)
    results = [_sent(rows[0], "ref-a"), _sent(rows[1], "ref-b")]
    results += [RowResult(row, "retrying", reason="503: busy", attempted=True, outcome="retryable") for row in rows[2:]]
    results[2].due_at = results[3].due_at = timezone.now()
    kept = record_results(token, results, timezone.now())
    assert sorted(r.row.id for r in kept) == [rows[1].id, rows[3].id]
    states = dict(Delivery.objects.filter(pk__in=[r.id for r in rows]).values_list("id", "state"))
    assert states == {rows[0].id: "claimed", rows[1].id: "sent", rows[2].id: "claimed", rows[3].id: "retrying"}
    # Every attempt is history, claimed or not.
    outcomes = dict(Attempt.objects.filter(delivery_id__in=[r.id for r in rows]).values_list("delivery_id", "outcome"))
    assert outcomes == {
        rows[0].id: "accepted",
        rows[1].id: "accepted",
        rows[2].id: "retryable",
        rows[3].id: "retryable",
    }


@pytest.mark.django_db(transaction=True)
def test_record_steps_back_from_a_row_another_transaction_holds_and_finishes_after_it(project):
    """A cancel may hold a lock on one of the batch's rows and then want another of them.
    The record must not sit on the rows it has while it waits (that closed a deadlock
    circle): it steps back, lets the other transaction have them, and finishes after it."""
    import threading
    import time

    import psycopg

    token, (first, second) = _claimed(project, 2)
    db = connection.settings_dict
    other = psycopg.connect(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"], autocommit=False
    )
    other.execute("SET lock_timeout = '3s'")
    other.execute("SELECT id FROM delivery_delivery WHERE id = %s FOR UPDATE", [second.id])
    got_first: list[bool] = []

    def cancel_like() -> None:
        time.sleep(0.3)  # the record is under way by now, and cannot have the second row
        other.execute("SELECT id FROM delivery_delivery WHERE id = %s FOR UPDATE", [first.id])
        got_first.append(True)
        other.commit()

    holder = threading.Thread(target=cancel_like)
    holder.start()
    try:
        kept = record_results(token, [_sent(first, "ref-1"), _sent(second, "ref-2")], timezone.now())
    finally:
        holder.join()
        other.close()
    assert got_first == [True]
    assert sorted(r.row.id for r in kept) == sorted([first.id, second.id])
    assert set(Delivery.objects.filter(pk__in=[first.id, second.id]).values_list("state", flat=True)) == {"sent"}
