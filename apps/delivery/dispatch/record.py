"""Recording a batch's results: one transaction, set-based, only for rows still claimed by us."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction

from apps.delivery import ratelimit
from apps.delivery.dispatch.outcome import RowResult
from apps.delivery.origins import FinalOutcome
from apps.delivery.services.common import events_write, origins_notify

FINAL_STATES = {"sent", "failed", "suppressed", "opted_out"}

UPDATE_DELIVERIES = """
UPDATE delivery_delivery d SET
    state = v.state, state_reason = v.reason, attempts = v.attempts, attempt_budget = v.budget,
    due_at = COALESCE(v.due_at, d.due_at), provider_reference = COALESCE(NULLIF(v.ref, ''), d.provider_reference),
    last_error = CASE WHEN v.error = '' THEN d.last_error ELSE v.error END,
    payload_snapshot = COALESCE(v.snapshot::jsonb, d.payload_snapshot),
    sent_at = CASE WHEN v.state = 'sent' THEN %(now)s ELSE d.sent_at END,
    claimed_until = NULL, claim_token = NULL, updated_at = %(now)s
FROM unnest(%(id)s::bigint[], %(state)s::text[], %(reason)s::text[], %(attempts)s::int[], %(budget)s::int[],
            %(due_at)s::timestamptz[], %(ref)s::text[], %(error)s::text[], %(snapshot)s::text[])
    AS v(id, state, reason, attempts, budget, due_at, ref, error, snapshot)
WHERE d.id = v.id AND d.id = ANY(%(id)s)
"""

# Which rows are still ours, locked until the results are in. Checked apart from the
# updates so those join on ids alone: a filter on state or outcome there lets a planner
# working from stale statistics pick a nested loop that rescans the whole batch per row.
STILL_CLAIMED = """
SELECT id FROM delivery_delivery WHERE id = ANY(%(id)s) AND claim_token = %(token)s AND state = 'claimed'
FOR UPDATE
"""

UPDATE_ATTEMPTS = """
UPDATE delivery_attempt a SET
    finished_at = %(now)s, outcome = v.outcome, provider_code = v.code, provider_message = v.message,
    latency_ms = v.latency
FROM unnest(%(id)s::bigint[], %(number)s::int[], %(outcome)s::text[], %(code)s::text[], %(message)s::text[],
            %(latency)s::int[]) AS v(id, number, outcome, code, message, latency)
WHERE a.delivery_id = v.id AND a.number = v.number AND a.delivery_id = ANY(%(id)s)
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
            failures = [r for r in items if not r.throttled]
            if not failures:
                continue
            cursor.execute(
                "UPDATE delivery_connector SET consecutive_failures = consecutive_failures + %s, last_failure_at = %s,"
                " last_error = %s, status = CASE WHEN consecutive_failures + %s >= %s THEN 'failing' ELSE status END"
                " WHERE id = %s",
                [len(failures), now, failures[-1].reason[:2000], len(failures), threshold, connector_id],
            )


def record_results(token: int, results: list[RowResult], now: datetime) -> list[RowResult]:
    """Apply results; returns those that were still ours to record."""
    if not results:
        return []
    params = {
        "now": now,
        "token": token,
        "id": [r.row.id for r in results],
        "state": [r.state for r in results],
        "reason": [r.reason[:255] for r in results],
        "attempts": [r.attempts_after for r in results],
        "budget": [r.extra.get("budget", r.row.attempt_budget) for r in results],
        "due_at": [r.due_at for r in results],
        "ref": [r.reference for r in results],
        "error": [r.reason if r.state in {"retrying", "failed"} else "" for r in results],
        "snapshot": [json.dumps(r.snapshot, default=str) if r.snapshot is not None else None for r in results],
    }
    attempted = [r for r in results if r.attempted]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(STILL_CLAIMED, {"id": params["id"], "token": token})
            kept_ids = {row[0] for row in cursor.fetchall()}
            if kept_ids:
                keep = [i for i, r in enumerate(results) if r.row.id in kept_ids]
                cursor.execute(
                    UPDATE_DELIVERIES,
                    {k: ([v[i] for i in keep] if isinstance(v, list) else v) for k, v in params.items()},
                )
            if attempted:
                # The attempt is history whether or not the claim is still ours.
                cursor.execute(
                    UPDATE_ATTEMPTS,
                    {
                        "now": now,
                        "id": [r.row.id for r in attempted],
                        "number": [r.attempts_after for r in attempted],
                        "outcome": [r.outcome for r in attempted],
                        "code": [r.code for r in attempted],
                        "message": [r.message for r in attempted],
                        "latency": [r.latency_ms for r in attempted],
                    },
                )
        kept = [r for r in results if r.row.id in kept_ids]
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
    _count_accounts(results)
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
