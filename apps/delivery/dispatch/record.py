"""Recording a batch's results: one transaction, set-based, only for rows still claimed by us."""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import OperationalError, connection, transaction
from psycopg.errors import LockNotAvailable

from apps.core.dbcompat import int_array, text_array
from apps.delivery import ratelimit
from apps.delivery.connectors.failover import PROVIDER_FAULT_CODES, failover_apply
from apps.delivery.dispatch.outcome import RowResult
from apps.delivery.dispatch.sent_content import sent_content_copy
from apps.delivery.origins import FinalOutcome
from apps.delivery.services.common import events_write, origins_notify

FINAL_STATES = {"sent", "failed", "suppressed", "opted_out"}

# Batches travel as one JSON document (jsonb_to_recordset) and id lists as one array
# literal: binding thousands of array elements one by one costs more than the update.
UPDATE_DELIVERIES = """
UPDATE delivery_delivery d SET
    state = v.state, state_reason = v.reason, attempts = v.attempts, attempt_budget = v.budget,
    due_at = COALESCE(v.due_at, d.due_at), provider_reference = COALESCE(NULLIF(v.ref, ''), d.provider_reference),
    last_error = CASE WHEN v.state = 'sent' THEN '' WHEN v.error = '' THEN d.last_error ELSE v.error END,
    payload_snapshot = COALESCE(v.snapshot, d.payload_snapshot),
    sent_at = CASE WHEN v.state = 'sent' THEN %(now)s ELSE d.sent_at END,
    crashes = CASE WHEN v.state = 'queued' THEN d.crashes ELSE 0 END,
    claimed_until = NULL, claim_token = NULL, updated_at = %(now)s
FROM jsonb_to_recordset(%(rows)s::jsonb) AS v(id bigint, state text, reason text, attempts int, budget int,
    due_at timestamptz, ref text, error text, snapshot jsonb)
WHERE d.id = v.id AND d.id = ANY(%(ids)s::bigint[]) AND d.claim_token = %(token)s
RETURNING d.id
"""
# A row put back without being tried (rate gate, origin hold, an unreachable Redis) keeps
# its crash count: only a row that got as far as a verdict has shown it does not kill its
# batch. Only rows still claimed by this batch are written, and RETURNING says which they were.
# The claim token alone decides: it is set together with state 'claimed' and cleared by
# every write that moves a row out of it (record, reclaim, replay). No filter on state or
# outcome joins the ids here: ``state = 'claimed'`` matches the partial index
# delivery_claim_expiry, which a planner with stale statistics prefers, and that index
# still holds an entry for every row claimed since the last vacuum (175k entries walked to
# find 500 rows, measured mid-campaign). The primary key and the unindexed token are all
# the planner is given. (LOCK_BATCH, below, has locked them all before either update runs.)

# A nested loop over the batch, one (delivery_id, number) index probe per row. No extra
# ``delivery_id = ANY(ids)`` here: it joins the index condition of every probe, and the
# array is then sorted again for each of the batch's rows (7x the cost of the update).
UPDATE_ATTEMPTS = """
UPDATE delivery_attempt a SET
    finished_at = %(now)s, outcome = v.outcome, provider_code = v.code, provider_message = v.message,
    latency_ms = v.latency, response = v.response
FROM jsonb_to_recordset(%(rows)s::jsonb) AS v(id bigint, number int, outcome text, code text, message text,
    latency int, response jsonb)
WHERE a.delivery_id = v.id AND a.number = v.number
"""


# The common case of a bulk batch, a plain accepted send, without building a JSON document:
# three array literals carry the ids, attempt counts and provider references. What it
# writes is what UPDATE_DELIVERIES writes for such a row (a test holds the two equal).
UPDATE_SENT = """
UPDATE delivery_delivery d SET
    state = 'sent', state_reason = '', last_error = '', attempts = v.attempts,
    provider_reference = COALESCE(NULLIF(v.ref, ''), d.provider_reference),
    sent_at = %(now)s, crashes = 0, claimed_until = NULL, claim_token = NULL, updated_at = %(now)s
FROM unnest(%(ids)s::bigint[], %(attempts)s::int[], %(refs)s::text[]) AS v(id, attempts, ref)
WHERE d.id = v.id AND d.id = ANY(%(ids)s::bigint[]) AND d.claim_token = %(token)s
RETURNING d.id
"""

UPDATE_ATTEMPTS_ACCEPTED = """
UPDATE delivery_attempt a SET
    finished_at = %(now)s, outcome = 'accepted', provider_code = '', provider_message = '',
    latency_ms = v.latency, response = NULL
FROM unnest(%(ids)s::bigint[], %(numbers)s::int[], %(latency)s::int[]) AS v(id, number, latency)
WHERE a.delivery_id = v.id AND a.number = v.number
"""


def _connector_health(results: list[RowResult], now: datetime) -> None:
    by_connector: dict[int, list[RowResult]] = {}
    for result in results:
        if result.attempted and result.connector_id is not None:
            by_connector.setdefault(result.connector_id, []).append(result)
    threshold = settings.TIDINGS_CONNECTOR_FAILURE_THRESHOLD
    with connection.cursor() as cursor:
        for connector_id, items in by_connector.items():
            if any(r.outcome == "accepted" for r in items):
                # Skip the write when nothing changes: this runs for every batch.
                cursor.execute(
                    "UPDATE delivery_connector SET status = 'healthy', consecutive_failures = 0, last_success_at = %s"
                    " WHERE id = %s AND (status <> 'healthy' OR consecutive_failures <> 0 OR last_success_at IS NULL"
                    " OR last_success_at < %s - interval '10 seconds')",
                    [now, connector_id, now],
                )
                continue
            # Only what says something about the connector counts towards failing over:
            # transient errors and account faults. A bad address or a rejected message is
            # the message's problem, and a throttle is rate control's business.
            failures = [
                r for r in items if not r.throttled and (r.outcome == "retryable" or r.code in PROVIDER_FAULT_CODES)
            ]
            if not failures:
                continue
            cursor.execute(
                "UPDATE delivery_connector SET consecutive_failures = consecutive_failures + %s, last_failure_at = %s,"
                " last_error = %s, status = CASE WHEN consecutive_failures + %s >= %s THEN 'failing' ELSE status END"
                " WHERE id = %s",
                [
                    len(failures),
                    now,
                    failures[-1].reason[:2000],
                    len(failures),
                    threshold,
                    connector_id,
                ],
            )


def _plainly_sent(r: RowResult) -> bool:
    return r.state == "sent" and not r.reason and r.due_at is None and r.snapshot is None and "budget" not in r.extra


def _plainly_accepted(r: RowResult) -> bool:
    return r.outcome == "accepted" and not r.code and not r.message and r.response is None


def _record_sent(cursor: Any, token: int, sent: list[RowResult], now: datetime) -> set[int]:
    sent = sorted(sent, key=lambda r: r.row.id)
    params = {
        "now": now,
        "ids": int_array([r.row.id for r in sent]),
        "attempts": int_array([r.attempts_after for r in sent]),
        "refs": text_array([r.reference for r in sent]),
        "token": token,
    }
    cursor.execute(UPDATE_SENT, params)
    return {pk for (pk,) in cursor.fetchall()}


# The batch's rows are locked in one statement, without waiting, before any is written.
# A pause or cancel updating a campaign's waiting rows locks the newest version of a row
# claimed after its snapshot before it finds the row no longer waiting, and keeps that
# lock; it may then wait for a row this batch holds. Waiting here too closed the circle
# (Postgres then failed one side: a cancel, or a record whose sends would go out again
# after the claim expired). So the record never waits for a row lock: it steps back and
# tries again once the other transaction is done.
LOCK_BATCH = """
SELECT id FROM delivery_delivery WHERE id = ANY(%(ids)s::bigint[]) AND claim_token = %(token)s ORDER BY id
FOR UPDATE NOWAIT
"""
LOCK_RETRY_SECONDS = 0.05


def _record_batch(cursor: Any, token: int, results: list[RowResult], now: datetime) -> set[int]:
    attempted = [r for r in results if r.attempted]
    cursor.execute(LOCK_BATCH, {"ids": int_array(sorted(r.row.id for r in results)), "token": token})
    ours = {pk for (pk,) in cursor.fetchall()}
    # Rows reclaimed meanwhile are not written; their attempts below are history all the same.
    results = [r for r in results if r.row.id in ours]
    sent = [r for r in results if _plainly_sent(r)]
    kept_ids = _record_sent(cursor, token, sent, now) if sent else set()
    if len(sent) < len(results):
        kept_ids |= _record_others(cursor, token, [r for r in results if not _plainly_sent(r)], now)
    accepted = [r for r in attempted if _plainly_accepted(r)]
    if accepted:
        cursor.execute(
            UPDATE_ATTEMPTS_ACCEPTED,
            {
                "now": now,
                "ids": int_array([r.row.id for r in accepted]),
                "numbers": int_array([r.attempts_after for r in accepted]),
                "latency": int_array([r.latency_ms for r in accepted]),
            },
        )
    others = [r for r in attempted if not _plainly_accepted(r)]
    if others:
        _attempts_others(cursor, others, now)
    return kept_ids


def _record_others(cursor: Any, token: int, results: list[RowResult], now: datetime) -> set[int]:
    rows = [
        {
            "id": r.row.id,
            "state": r.state,
            "reason": r.reason[:255],
            "attempts": r.attempts_after,
            "budget": r.extra.get("budget", r.row.attempt_budget),
            "due_at": r.due_at.isoformat() if r.due_at is not None else None,
            "ref": r.reference,
            "error": r.reason if r.state in {"retrying", "failed"} else "",
            "snapshot": r.snapshot,
        }
        for r in results
    ]
    cursor.execute(
        UPDATE_DELIVERIES,
        {
            "now": now,
            "rows": json.dumps(rows, default=str),
            "ids": int_array(sorted(r.row.id for r in results)),
            "token": token,
        },
    )
    return {pk for (pk,) in cursor.fetchall()}


def _attempts_others(cursor: Any, attempted: list[RowResult], now: datetime) -> None:
    # The attempt is history whether or not the claim is still ours.
    rows = [
        {
            "id": r.row.id,
            "number": r.attempts_after,
            "outcome": r.outcome,
            "code": r.code,
            "message": r.message,
            "latency": r.latency_ms,
            "response": r.response,
        }
        for r in attempted
    ]
    cursor.execute(UPDATE_ATTEMPTS, {"now": now, "rows": json.dumps(rows, default=str)})


def record_results(token: int, results: list[RowResult], now: datetime) -> list[RowResult]:
    """Apply results; returns those that were still ours to record."""
    if not results:
        return []
    results = failover_apply(results, now)
    # Until the claim runs out: after that the rows are the sweeper's, and nothing is ours.
    give_up = time.monotonic() + settings.TIDINGS_DISPATCH_CLAIM_TTL_SECONDS
    while True:
        try:
            kept = _record_once(token, results, now)
            break
        except OperationalError as exc:
            if not isinstance(exc.__cause__, LockNotAvailable) or time.monotonic() >= give_up:
                raise
            time.sleep(LOCK_RETRY_SECONDS)
    _count_accounts(results)
    return kept


def _record_once(token: int, results: list[RowResult], now: datetime) -> list[RowResult]:
    with transaction.atomic():
        with connection.cursor() as cursor:
            kept_ids = _record_batch(cursor, token, results, now)
            kept = [r for r in results if r.row.id in kept_ids]
            sent_content_copy(cursor, kept, now)
        events_write(
            (r.row.project_id, r.row.id, r.row.channel, r.state, r.reason, now) for r in kept if r.state != "queued"
        )
        _connector_health(results, now)
        origins_notify(
            [
                FinalOutcome(r.row.id, r.row.project_id, r.row.origin_kind, r.row.origin_id, r.state, r.reason)
                for r in kept
                if r.state in FINAL_STATES
            ]
        )
    return kept


def _count_accounts(results: list[RowResult]) -> None:
    ok: Counter[str] = Counter()
    throttled: Counter[str] = Counter()
    for r in results:
        if r.attempted and r.account:
            if r.outcome == "accepted":
                ok[r.account] += 1
            elif r.throttled:
                throttled[r.account] += 1
    for account in set(ok) | set(throttled):
        ratelimit.account_record(account, ok[account], throttled[account])
