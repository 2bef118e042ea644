"""Set-based operations on one campaign's rows of the delivery ledger.

Pause parks the campaign's waiting rows as ``scheduled`` with a due time far in the
future (the dispatcher only claims ``queued``/``retrying`` rows and the sweeper only
promotes scheduled rows that are due), so nothing new is claimed while in-flight batches
finish. Resume puts exactly those parked rows back. Every move appends DeliveryEvents,
as every state change in the ledger must.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime

from django.db import connection

from apps.delivery.models import Delivery, DeliveryEvent

DELIVERIES = Delivery._meta.db_table
EVENTS = DeliveryEvent._meta.db_table
ORIGIN_KIND = "campaign"
# "Never, until resumed": far enough to be unmistakable, near enough for Python datetimes.
HOLD_UNTIL = datetime(9999, 1, 1, tzinfo=UTC)


def _move(sql_where: str, params: list, *, set_sql: str, set_params: list, state: str, reason: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH moved AS (
                UPDATE {DELIVERIES} d SET {set_sql}, updated_at = now()
                WHERE d.project_id = %s AND d.origin_kind = %s AND d.origin_id = %s AND {sql_where}
                RETURNING d.id, d.project_id, d.channel
            ), logged AS (
                INSERT INTO {EVENTS} (project_id, delivery_id, channel, state, reason, at)
                SELECT project_id, id, channel, %s, %s, now() FROM moved
            )
            SELECT count(*) FROM moved
            """,  # noqa: S608
            [*set_params, *params, state, reason],
        )
        return int(cursor.fetchone()[0])


def ledger_hold(*, project_id: int, campaign_id: int, reason: str) -> int:
    """Park every waiting row of the campaign; returns how many."""
    return _move(
        "d.state IN ('queued', 'retrying')",
        [project_id, ORIGIN_KIND, str(campaign_id)],
        set_sql="state = 'scheduled', due_at = %s, state_reason = %s",
        set_params=[HOLD_UNTIL, reason[:255]],
        state="scheduled",
        reason=reason,
    )


def ledger_release(*, project_id: int, campaign_id: int, reason: str) -> int:
    """Return parked rows to the queue, due now. Rows already sent are never touched."""
    return _move(
        "d.state IN ('scheduled', 'queued') AND d.due_at = %s",
        [project_id, ORIGIN_KIND, str(campaign_id), HOLD_UNTIL],
        set_sql="state = 'queued', due_at = now(), state_reason = %s",
        set_params=[reason[:255]],
        state="queued",
        reason=reason,
    )


def ledger_cancel(*, project_id: int, campaign_id: int, reason: str) -> int:
    """Waiting rows become ``cancelled``: they stay in the ledger for audit."""
    return _move(
        "d.state IN ('scheduled', 'queued', 'retrying')",
        [project_id, ORIGIN_KIND, str(campaign_id)],
        set_sql="state = 'cancelled', claimed_until = NULL, state_reason = %s",
        set_params=[reason[:255]],
        state="cancelled",
        reason=reason,
    )


def ledger_retry_dead(*, project_id: int, campaign_id: int, reason: str, hold: bool = False) -> int:
    """Dead letters only go back to the queue, with a fresh attempt budget."""
    state = "scheduled" if hold else "queued"
    return _move(
        "d.state = 'failed'",
        [project_id, ORIGIN_KIND, str(campaign_id)],
        set_sql=(
            "state = %s, due_at = %s, attempt_budget = d.attempts + %s, crashes = 0, last_error = '', state_reason = %s"
        ),
        set_params=[state, HOLD_UNTIL if hold else datetime.now(tz=UTC), 3, reason[:255]],
        state=state,
        reason=reason,
    )


@dataclass
class LedgerCounts:
    total: int = 0
    pending: int = 0
    claimed: int = 0
    sent: int = 0
    delivered: int = 0
    bounced: int = 0
    complained: int = 0
    dead: int = 0
    failed: int = 0
    retried: int = 0
    suppressed: int = 0
    cancelled: int = 0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


SENT_STATES = ("sent", "delivered", "bounced", "complained")


def ledger_counts(*, project_id: int, campaign_id: int) -> LedgerCounts:
    """One GROUP BY over the campaign's rows: the truth the counters are checked against.

    failed = provider calls that did not succeed (attempts beyond the accepted one);
    retried = recipients that needed more than one attempt.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT state, count(*), coalesce(sum(attempts), 0), count(*) FILTER (WHERE attempts > 1)
            FROM {DELIVERIES}
            WHERE project_id = %s AND origin_kind = %s AND origin_id = %s
            GROUP BY state
            """,  # noqa: S608
            [project_id, ORIGIN_KIND, str(campaign_id)],
        )
        rows = cursor.fetchall()
    counts = LedgerCounts()
    attempts_total = 0
    for state, n, attempts, retried in rows:
        counts.total += n
        attempts_total += attempts
        counts.retried += retried
        if state in SENT_STATES:
            counts.sent += n
        if state in ("delivered", "bounced", "complained"):
            setattr(counts, state, getattr(counts, state) + n)
        elif state == "failed":
            counts.dead += n
        elif state in ("suppressed", "opted_out"):
            counts.suppressed += n
        elif state == "cancelled":
            counts.cancelled += n
        elif state == "claimed":
            counts.claimed += n
            counts.pending += n
        elif state in ("scheduled", "queued", "retrying"):
            counts.pending += n
    counts.failed = max(0, attempts_total - counts.sent)
    return counts
