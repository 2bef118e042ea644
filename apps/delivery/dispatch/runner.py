"""The lane loop a wake-up runs, and the sweeper beat runs."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.delivery.dispatch.claim import Claimed, claim_batch
from apps.delivery.dispatch.guard import batch_record, group_process
from apps.delivery.dispatch.outcome import RowResult
from apps.delivery.redis_client import get_redis
from apps.delivery.services.common import events_write
from apps.delivery.wake import DISPATCH_TASK, clear_flag, wake_now

log = logging.getLogger(__name__)

WEIGHTS = {"high": 3, "normal": 2, "bulk": 1}
ORDER = ("high", "normal", "bulk")


def lanes_served_by(lane: str) -> list[tuple[str, int]]:
    """A wake-up for ``lane`` serves it and every lane above it, 3:2:1."""
    return [(name, WEIGHTS[name]) for name in ORDER[: ORDER.index(lane) + 1]]


NEXT_DUE_SQL = """
SELECT EXTRACT(EPOCH FROM (min(due_at) - statement_timestamp())) FROM delivery_delivery
WHERE lane = %s AND state IN ('queued', 'retrying')
"""
# Beyond this the sweeper's regular wake-ups are precise enough.
WAKE_LATER_HORIZON_SECONDS = 10.0


def _wake_when_next_due(lane: str, served: list[str]) -> None:
    """Retries and rate-deferred rows come due soon: ask for a wake-up then, not a poll.

    At most one delayed wake-up per lane is pending at a time (a Redis flag that lives
    until it fires), so runs that end together do not multiply them.
    """
    from config.celery import app

    delays = []
    with connection.cursor() as cursor:
        for name in served:
            cursor.execute(NEXT_DUE_SQL, [name])
            (delay,) = cursor.fetchone()
            if delay is not None:
                delays.append(float(delay))
    if not delays or min(delays) > WAKE_LATER_HORIZON_SECONDS:
        return
    delay = max(min(delays), 0.05)
    flag = f"tidings:delivery:wake-later:{lane}"
    fresh = get_redis().set(flag, 1, nx=True, px=int(delay * 1000) + 1)
    if fresh:
        app.send_task(DISPATCH_TASK, args=[lane], queue=lane, countdown=delay)


def batch_size(lane: str) -> int:
    if lane == "bulk" and getattr(settings, "TIDINGS_DISPATCH_BULK_BATCH_SIZE", 0):
        return int(settings.TIDINGS_DISPATCH_BULK_BATCH_SIZE)
    return int(settings.TIDINGS_DISPATCH_BATCH_SIZE)


def dispatch_batch(lane: str, *, limit: int | None = None) -> int:
    """Claim one batch of ``lane`` and carry it all the way to recorded results."""
    limit = limit or batch_size(lane)
    token, rows = claim_batch(lane, limit=limit, ttl_seconds=settings.TIDINGS_DISPATCH_CLAIM_TTL_SECONDS)
    if not rows:
        return 0
    groups: dict[tuple[int, str, int | None], list[Claimed]] = defaultdict(list)
    for row in rows:
        groups[(row.project_id, row.channel, row.connector_id)].append(row)
    results: list[RowResult] = []
    for (project_id, channel, connector_id), group in groups.items():
        results += group_process(project_id, channel, connector_id, group)
    batch_record(token, results)
    return len(rows)


def dispatch_lane_run(lane: str, *, seconds: float | None = None) -> dict[str, int]:
    """Drain ``lane`` (and the lanes above it) until nothing is due or the time is up."""
    clear_flag(lane)
    plan = lanes_served_by(lane)
    deadline = time.monotonic() + (seconds or settings.TIDINGS_DISPATCH_RUN_SECONDS)
    done: dict[str, int] = defaultdict(int)
    invited = False
    while time.monotonic() < deadline:
        claimed_any = False
        for name, weight in plan:
            limit = batch_size(name)
            for _ in range(weight):
                count = dispatch_batch(name, limit=limit)
                if not count:
                    break  # an empty lane passes its turn
                done[name] += count
                claimed_any = True
                if count == limit and not invited:
                    # A full batch: more is waiting, invite another worker to the lane.
                    wake_now([lane])
                    invited = True
        if not claimed_any:
            _wake_when_next_due(lane, [name for name, _ in plan])
            return dict(done)
    wake_now([lane], force=True)  # time is up with work left: hand over to a fresh run
    return dict(done)


RECLAIM_SQL = """
UPDATE delivery_delivery d
SET state = 'retrying', claimed_until = NULL, claim_token = NULL, attempts = d.attempts + 1,
    due_at = statement_timestamp(), updated_at = statement_timestamp(),
    last_error = 'claim expired: the worker was lost mid-send'
FROM (
    SELECT id FROM delivery_delivery WHERE state = 'claimed' AND claimed_until < statement_timestamp()
    ORDER BY claimed_until LIMIT %s FOR UPDATE SKIP LOCKED
) c
WHERE d.id = c.id
RETURNING d.id, d.project_id, d.channel, d.attempts
"""

PROMOTE_SQL = """
UPDATE delivery_delivery d SET state = 'queued', updated_at = statement_timestamp()
FROM (
    SELECT id FROM delivery_delivery WHERE state = 'scheduled' AND due_at <= statement_timestamp()
    ORDER BY due_at LIMIT %s FOR UPDATE SKIP LOCKED
) c
WHERE d.id = c.id
RETURNING d.id, d.project_id, d.channel
"""

DUE_SQL = """
SELECT EXISTS (SELECT 1 FROM delivery_delivery
               WHERE lane = %s AND state IN ('queued', 'retrying') AND due_at <= statement_timestamp())
"""


def _reclaim_and_promote(cursor: Any, now: Any, limit: int) -> tuple[list[Any], list[Any]]:
    cursor.execute(RECLAIM_SQL, [limit])
    reclaimed = cursor.fetchall()
    if reclaimed:
        # The attempt in flight when the worker died never got an answer.
        cursor.execute(
            "UPDATE delivery_attempt a SET outcome = 'lost', finished_at = %s,"
            " provider_message = 'worker lost before the result was recorded'"
            " FROM unnest(%s::bigint[], %s::int[]) AS v(id, number)"
            " WHERE a.delivery_id = v.id AND a.number = v.number AND a.outcome = '' AND a.delivery_id = ANY(%s)",
            [now, [r[0] for r in reclaimed], [r[3] for r in reclaimed], [r[0] for r in reclaimed]],
        )
    cursor.execute(PROMOTE_SQL, [limit])
    return reclaimed, cursor.fetchall()


def sweep(*, limit: int = 50_000) -> dict[str, int]:
    """Reclaim expired claims, release due scheduled rows, and wake every lane with due work."""
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        reclaimed, promoted = _reclaim_and_promote(cursor, now, limit)
        events_write(
            (p, pk, ch, "retrying", "claim expired: the worker was lost mid-send", now) for pk, p, ch, _ in reclaimed
        )
        events_write((p, pk, ch, "queued", "due", now) for pk, p, ch in promoted)
    due = []
    with connection.cursor() as cursor:
        for lane in ORDER:
            cursor.execute(DUE_SQL, [lane])
            if cursor.fetchone()[0]:
                due.append(lane)
    if due:
        wake_now(due, force=True)
    if reclaimed:
        log.warning("sweeper reclaimed %d deliveries whose claim expired", len(reclaimed))
    return {"reclaimed": len(reclaimed), "promoted": len(promoted), "lanes_woken": len(due)}
