"""The lane loop a wake-up runs, and the sweeper beat runs."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.delivery.dispatch.claim import Claimed, claim_batch, claim_suspect
from apps.delivery.dispatch.guard import batch_record, group_process
from apps.delivery.dispatch.outcome import RowResult
from apps.delivery.origins import FinalOutcome
from apps.delivery.redis_client import get_redis
from apps.delivery.services.common import events_write, origins_notify
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
    """Claim one batch of ``lane`` and carry it all the way to recorded results; then one
    row on its last chance, if one is due, alone."""
    limit = limit or batch_size(lane)
    ttl = settings.TIDINGS_DISPATCH_CLAIM_TTL_SECONDS
    token, rows = claim_batch(lane, limit=limit, ttl_seconds=ttl)
    if rows:
        _carry(token, rows)
    # Claimed only once the batch is recorded: if the suspect takes this worker down
    # again, no other row is charged for it.
    suspect_token, suspect = claim_suspect(lane, ttl_seconds=ttl)
    if suspect:
        _carry(suspect_token, suspect)
    return len(rows) + len(suspect)


def _carry(token: int, rows: list[Claimed]) -> None:
    groups: dict[tuple[int, str, int | None], list[Claimed]] = defaultdict(list)
    for row in rows:
        groups[(row.project_id, row.channel, row.connector_id)].append(row)
    results: list[RowResult] = []
    for (project_id, channel, connector_id), group in groups.items():
        results += group_process(project_id, channel, connector_id, group)
    batch_record(token, results)


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
                if count >= limit and not invited:
                    # A full batch: more is waiting, invite another worker to the lane.
                    wake_now([lane])
                    invited = True
        if not claimed_any:
            _wake_when_next_due(lane, [name for name, _ in plan])
            return dict(done)
    wake_now([lane], force=True)  # time is up with work left: hand over to a fresh run
    return dict(done)


LOST = "claim expired: the worker was lost mid-send"
POISON = "poison"

# A stale claim is a batch that never finished: each one taken back is a crash charged to
# the row. A row charged TIDINGS_POISON_AFTER_CRASHES times is not run again: it is
# dead-lettered as "poison". Only an attempt that was written counts against the attempt
# budget (a batch can die before it reaches the provider), and a row whose budget is spent
# is dead-lettered instead of being claimed once more.
RECLAIM_SQL = """
WITH stale AS (
    SELECT id FROM delivery_delivery WHERE state = 'claimed' AND claimed_until < statement_timestamp()
    ORDER BY claimed_until LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), counted AS (
    SELECT d.id, d.crashes + 1 AS crashes,
        d.attempts + (EXISTS (SELECT 1 FROM delivery_attempt a
                              WHERE a.delivery_id = d.id AND a.number = d.attempts + 1))::int AS attempts,
        d.attempt_budget
    FROM delivery_delivery d JOIN stale ON stale.id = d.id
), judged AS (
    SELECT id, crashes, attempts,
        CASE WHEN crashes >= %(poison_after)s THEN %(poison)s
             WHEN attempts >= attempt_budget THEN 'exhausted ' || attempts || ' attempts: ' || %(lost)s
        END AS dead
    FROM counted
)
UPDATE delivery_delivery d
SET state = CASE WHEN j.dead IS NULL THEN 'retrying' ELSE 'failed' END,
    state_reason = COALESCE(j.dead, d.state_reason),
    last_error = CASE WHEN j.dead = %(poison)s THEN %(poison_error)s ELSE COALESCE(j.dead, %(lost)s) END,
    attempts = j.attempts, crashes = j.crashes, claimed_until = NULL, claim_token = NULL,
    due_at = CASE WHEN j.dead IS NULL THEN statement_timestamp() ELSE d.due_at END,
    payload_snapshot = CASE WHEN j.dead IS NULL THEN d.payload_snapshot ELSE COALESCE(d.payload_snapshot,
        jsonb_build_object('destination', d.destination, 'template_version_id', d.template_version_id,
                           'context', d.context, 'content', d.content)) END,
    updated_at = statement_timestamp()
FROM judged j
WHERE d.id = j.id
RETURNING d.id, d.project_id, d.channel, d.attempts, d.state, d.state_reason, d.origin_kind, d.origin_id
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
    poison_after = int(settings.TIDINGS_POISON_AFTER_CRASHES)
    cursor.execute(
        RECLAIM_SQL,
        {
            "limit": limit,
            "poison_after": poison_after,
            "poison": POISON,
            "poison_error": f"{POISON}: its batch was lost {poison_after} times before it finished ({LOST})",
            "lost": LOST,
        },
    )
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
            (p, pk, ch, state, LOST if state == "retrying" else reason, now)
            for pk, p, ch, _, state, reason, _, _ in reclaimed
        )
        events_write((p, pk, ch, "queued", "due", now) for pk, p, ch in promoted)
        dead = [r for r in reclaimed if r[4] == "failed"]
        origins_notify(
            [FinalOutcome(pk, p, kind, origin, state, reason) for pk, p, _, _, state, reason, kind, origin in dead]
        )
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
    for pk, project_id, _, _, _, reason, _, _ in dead:
        log.error("delivery %s of project %s dead-lettered on reclaim: %s", pk, project_id, reason)
    return {"reclaimed": len(reclaimed), "promoted": len(promoted), "lanes_woken": len(due), "dead": len(dead)}
