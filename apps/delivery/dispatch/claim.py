"""Claiming due deliveries: one statement per batch, SKIP LOCKED, keyset for the bulk lane."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

# An empty context comes back as NULL: a campaign's million rows all carry '{}', and each
# would otherwise be parsed into a dict of its own.
_RETURNING = """
RETURNING d.id, d.project_id, d.channel, d.destination, d.subscriber_id, d.template_version_id, d.content,
    NULLIF(d.context, '{}'::jsonb), d.attempts, d.attempt_budget, d.delivery_key, d.connector_id, d.category,
    d.origin_kind, d.origin_id, d.state, d.crashes
"""

# A row whose batches were lost (``crashes``, counted by the sweeper) still goes out with
# the others while it has crashes to spare: a deploy that kills workers mid-batch must not
# slow everything it interrupted to one message per call. On its last chance it is claimed
# alone (SUSPECT_CLAIM): if it kills its worker once more, it is the only row charged.
_CLAIM = """
UPDATE delivery_delivery d
SET state = 'claimed', claimed_until = statement_timestamp() + make_interval(secs => %(ttl)s), claim_token = %(token)s
FROM (
    SELECT id FROM delivery_delivery
    WHERE lane = %(lane)s AND state IN ('queued', 'retrying') AND due_at <= statement_timestamp()
        AND crashes < %(alone_from)s {keyset}
    ORDER BY {order} LIMIT %(limit)s FOR UPDATE SKIP LOCKED
) c
WHERE d.id = c.id
{returning}
"""

# High and normal: oldest due first. Bulk: a keyset walk on id (flat cost as sent rows pile up).
CLAIM_BY_DUE = _CLAIM.format(keyset="", order="due_at, id", returning=_RETURNING)
# The lane is spelled out, not bound: only then can a plan use the bulk lane's own partial index.
CLAIM_BY_ID = _CLAIM.replace("lane = %(lane)s", "lane = 'bulk'").format(
    keyset="AND id > %(cursor)s", order="id", returning=_RETURNING
)
# Through the partial index delivery_suspects, which holds only rows back from a lost batch.
_SUSPECT = """
UPDATE delivery_delivery d
SET state = 'claimed', claimed_until = statement_timestamp() + make_interval(secs => %(ttl)s), claim_token = %(token)s
FROM (
    SELECT id FROM delivery_delivery
    WHERE lane = %(lane)s AND state IN ('queued', 'retrying') AND due_at <= statement_timestamp() AND crashes > 0
        AND crashes >= %(alone_from)s
    ORDER BY due_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
) c
WHERE d.id = c.id
"""
SUSPECT_CLAIM = _SUSPECT + _RETURNING


def alone_from() -> int:
    """The crash count from which a row is claimed on its own: its last chance."""
    return max(int(settings.TIDINGS_POISON_AFTER_CRASHES) - 1, 1)


@dataclass(slots=True)
class Claimed:
    id: int
    project_id: int
    channel: str
    destination: str
    subscriber_id: int | None
    template_version_id: int | None
    content: Any
    context: Any
    attempts: int
    attempt_budget: int
    delivery_key: str
    connector_id: int | None
    category: str
    origin_kind: str
    origin_id: str
    previous_state: str
    crashes: int = 0


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


# The keyset cursor per lane lives in the process: each worker walks the lane in id order
# and wraps to the start when it finds nothing ahead. Rows behind the cursor (retries,
# rate-deferred rows, reclaimed claims, a fan-out chunk that committed late) are picked up
# by that wrap, and at least every LOOK_BEHIND_SECONDS while there is always more ahead.
# Each wrap walks the index entries that claimed rows left behind until vacuum removes
# them, so it is kept rare: a short batch keeps the cursor rather than starting over.
_cursors: dict[str, int] = {}
_looked_behind_at: dict[str, float] = {}
LOOK_BEHIND_SECONDS = 5.0


def _claim_bulk(cursor: Any, sql: str, params: dict[str, Any]) -> list[Any]:
    lane = "bulk"
    now = time.monotonic()
    start = _cursors.get(lane, 0)
    if start and now - _looked_behind_at.get(lane, 0.0) >= LOOK_BEHIND_SECONDS:
        start = 0
    if start == 0:
        _looked_behind_at[lane] = now
    cursor.execute(sql, {**params, "cursor": start})
    rows = cursor.fetchall()
    if not rows and start > 0:
        _looked_behind_at[lane] = now
        cursor.execute(sql, {**params, "cursor": 0})
        rows = cursor.fetchall()
    _cursors[lane] = max(r[0] for r in rows) if rows else 0
    return rows


def _claimed(rows: list[Any]) -> list[Claimed]:
    claimed = [Claimed(*row) for row in rows]
    for item in claimed:
        item.content = _json(item.content)
        item.context = _json(item.context) or {}
    # RETURNING shows the new state; what matters later is only that it was waiting.
    return claimed


def claim_batch(lane: str, *, limit: int, ttl_seconds: float) -> tuple[int, list[Claimed]]:
    """Claim up to ``limit`` due rows of ``lane``; returns (claim token, rows)."""
    token = secrets.randbits(62)
    params: dict[str, Any] = {
        "lane": lane,
        "limit": limit,
        "ttl": ttl_seconds,
        "token": token,
        "alone_from": alone_from(),
    }
    with connection.cursor() as cursor:
        if lane == "bulk":
            rows = _claim_bulk(cursor, CLAIM_BY_ID, params)
        else:
            cursor.execute(CLAIM_BY_DUE, params)
            rows = cursor.fetchall()
    return token, _claimed(rows)


def claim_suspect(lane: str, *, ttl_seconds: float) -> tuple[int, list[Claimed]]:
    """Claim one due row of ``lane`` on its last chance, on a claim of its own."""
    token = secrets.randbits(62)
    params = {"lane": lane, "ttl": ttl_seconds, "token": token, "alone_from": alone_from()}
    with connection.cursor() as cursor:
        cursor.execute(SUSPECT_CLAIM, params)
        return token, _claimed(cursor.fetchall())
