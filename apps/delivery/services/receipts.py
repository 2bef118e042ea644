"""Receipt ingest: the one door for provider reports (real webhooks and dry-run alike).

Idempotent by provider event id (a unique constraint does the deduplication) and
monotonic: a delivery only moves up ``sent < delivered < bounced < complained``, so a late
"delivered" never hides a bounce.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.utils import timezone

from apps.delivery.channels.base import ReceiptEvent, ReceiptStatus
from apps.delivery.origins import FinalOutcome
from apps.delivery.services.common import events_write, origins_notify
from apps.delivery.services.suppression import suppressions_add_bulk

RANK = {"sent": 1, "delivered": 2, "bounced": 3, "complained": 4}
# What each report means for the delivery's state (None: recorded, state unchanged).
STATE_FOR_STATUS: dict[str, str | None] = {
    ReceiptStatus.DELIVERED: "delivered",
    ReceiptStatus.OPENED: "delivered",
    ReceiptStatus.CLICKED: "delivered",
    ReceiptStatus.BOUNCED: "bounced",
    ReceiptStatus.FAILED: "bounced",
    ReceiptStatus.COMPLAINED: "complained",
    ReceiptStatus.UNSUBSCRIBED: None,
}


@dataclass
class IngestResult:
    recorded: int = 0
    duplicates: int = 0
    state_changes: int = 0
    suppressed: int = 0
    # Reports for deliveries whose send is still being recorded; ask again a little later.
    pending: list[ReceiptEvent] = field(default_factory=list)
    unmatched: int = 0


def _locate(project_id: int, events: list[ReceiptEvent]) -> dict[int, tuple]:
    """Lock the deliveries these events are about (id order, so ingests never deadlock)."""
    ids = [e.delivery_id for e in events if e.delivery_id]
    refs = [e.provider_reference for e in events if not e.delivery_id and e.provider_reference]
    if not ids and not refs:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT id, state, channel, destination, origin_kind, origin_id, provider_reference
            FROM delivery_delivery
            WHERE project_id = %s AND (id = ANY(%s) OR provider_reference = ANY(%s))
            ORDER BY id FOR UPDATE
            """,
            [project_id, ids, refs],
        )
        return {row[0]: row for row in cursor.fetchall()}


@transaction.atomic
def receipt_ingest(*, project_id: int, events: list[ReceiptEvent], connector_id: int | None = None) -> IngestResult:
    result = IngestResult()
    if not events:
        return result
    rows = _locate(project_id, events)
    by_ref = {row[6]: row for row in rows.values() if row[6]}
    now = timezone.now()
    matched: list[tuple[ReceiptEvent, tuple | None]] = []
    for event in events:
        row = rows.get(event.delivery_id) if event.delivery_id else by_ref.get(event.provider_reference)
        if row is not None and row[1] not in RANK:
            # Not recorded as sent yet (still claimed) or never sent: too early to apply.
            result.pending.append(event)
            continue
        matched.append((event, row))
    if not matched:
        return result
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO delivery_receipt (project_id, provider_event_id, delivery_id, connector_id, status,
                provider_reference, hard_bounce, description, raw, occurred_at, received_at)
            SELECT %s, e.event_id, e.delivery_id, %s, e.status, e.ref, e.hard, e.descr, e.raw::jsonb, e.at, %s
            FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::bool[], %s::text[], %s::text[],
                        %s::timestamptz[]) AS e(event_id, delivery_id, status, ref, hard, descr, raw, at)
            ON CONFLICT (project_id, provider_event_id) DO NOTHING
            RETURNING provider_event_id
            """,
            [
                project_id,
                connector_id,
                now,
                [e.provider_event_id for e, _ in matched],
                [row[0] if row else None for _, row in matched],
                [str(e.status) for e, _ in matched],
                [e.provider_reference or (row[6] if row else "") for e, row in matched],
                [e.hard_bounce for e, _ in matched],
                [e.description[:2000] for e, _ in matched],
                [json.dumps(dict(e.raw), default=str) for e, _ in matched],
                [e.occurred_at or now for e, _ in matched],
            ],
        )
        fresh = {r[0] for r in cursor.fetchall()}
    result.recorded = len(fresh)
    result.duplicates = len(matched) - len(fresh)
    targets: dict[int, tuple[str, str]] = {}
    suppress: list[tuple[str, str, str]] = []
    for event, row in matched:
        if event.provider_event_id not in fresh:
            continue
        if row is None:
            result.unmatched += 1
            continue
        fresh.discard(event.provider_event_id)  # the same id twice in one call counts once
        if event.status == ReceiptStatus.BOUNCED and event.hard_bounce:
            suppress.append((row[2], row[3], "bounce"))
        elif event.status == ReceiptStatus.COMPLAINED:
            suppress.append((row[2], row[3], "complaint"))
        elif event.status == ReceiptStatus.UNSUBSCRIBED:
            suppress.append((row[2], row[3], "unsubscribe"))
        state = STATE_FOR_STATUS.get(event.status)
        current = targets.get(row[0], (row[1], ""))[0]
        if state is not None and RANK[state] > RANK[current]:
            targets[row[0]] = (state, event.description[:255])
    if targets:
        with connection.cursor() as cursor:
            cursor.execute(
                """
                UPDATE delivery_delivery d SET state = v.state, state_reason = v.reason, updated_at = %s
                FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, state, reason)
                WHERE d.id = v.id AND d.project_id = %s AND d.id = ANY(%s)
                """,
                [
                    now,
                    list(targets),
                    [s for s, _ in targets.values()],
                    [r for _, r in targets.values()],
                    project_id,
                    list(targets),
                ],
            )
    if targets:
        result.state_changes = len(targets)
        events_write((project_id, pk, rows[pk][2], state, reason, now) for pk, (state, reason) in targets.items())
        origins_notify(
            [
                FinalOutcome(pk, project_id, rows[pk][4], rows[pk][5], state, reason)
                for pk, (state, reason) in targets.items()
            ]
        )
    if suppress:
        result.suppressed = suppressions_add_bulk(project_id=project_id, entries=suppress, source="receipt")
    return result
