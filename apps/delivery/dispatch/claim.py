"""Claiming due deliveries: one statement per batch, SKIP LOCKED, keyset for the bulk lane."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
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
        AND crashes < %(alone_from)s
    ORDER BY {order} LIMIT %(limit)s FOR UPDATE SKIP LOCKED
) c
WHERE d.id = c.id
{returning}
"""

# High and normal: oldest due first. Bulk: CLAIM_BULK_FAIRLY below.
CLAIM_BY_DUE = _CLAIM.format(order="due_at, id", returning=_RETURNING)
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


# The bulk lane is shared fairly between projects: each claim takes an equal share from
# every project with waiting bulk rows (up to ``limit`` projects per claim, in turn), so
# one tenant's million-recipient campaign does not hold another's back until it is done.
# Each project's share is a keyset walk on (project, id) from that project's own cursor,
# kept in the process: it wraps to the start when it finds nothing ahead. Rows behind a
# cursor (retries, rate-deferred rows, reclaimed claims, a fan-out chunk that committed
# late) are picked up by that wrap, and at least every LOOK_BEHIND_SECONDS while there is
# always more ahead. Each wrap walks the index entries that claimed rows left behind until
# vacuum removes them, so it is kept rare, and a project that had nothing due even from its
# start rests until the list of projects is next read.
_FAIR = """
UPDATE delivery_delivery d
SET state = 'claimed', claimed_until = statement_timestamp() + make_interval(secs => %(ttl)s), claim_token = %(token)s
FROM (
    SELECT c.id
    FROM unnest(%(projects)s::bigint[], %(after)s::bigint[]) AS p(project_id, after)
    CROSS JOIN LATERAL (
        SELECT id FROM delivery_delivery
        WHERE lane = 'bulk' AND state IN ('queued', 'retrying') AND project_id = p.project_id AND id > p.after
            AND due_at <= statement_timestamp() AND crashes < %(alone_from)s
        ORDER BY id LIMIT %(share)s FOR UPDATE SKIP LOCKED
    ) c
) c
WHERE d.id = c.id
"""
CLAIM_BULK_FAIRLY = _FAIR + _RETURNING
# A loose index scan over delivery_bulk_claimable: one probe per project with bulk work.
# Ordered as that index is, so that no other index of the table can serve it as cheaply.
BULK_PROJECTS = """
WITH RECURSIVE p(project_id) AS (
    (SELECT project_id FROM delivery_delivery
     WHERE lane = 'bulk' AND state IN ('queued', 'retrying') ORDER BY project_id, id LIMIT 1)
    UNION ALL
    SELECT (SELECT project_id FROM delivery_delivery
            WHERE lane = 'bulk' AND state IN ('queued', 'retrying') AND project_id > p.project_id
            ORDER BY project_id, id LIMIT 1)
    FROM p WHERE p.project_id IS NOT NULL
)
SELECT project_id FROM p WHERE project_id IS NOT NULL
"""
PROJECTS_REFRESH_SECONDS = 1.0
LOOK_BEHIND_SECONDS = 5.0


@dataclass
class _BulkWalk:
    projects: list[int] = field(default_factory=list)
    read_at: float = float("-inf")
    looked_behind_at: float = float("-inf")
    turn: int = 0
    cursors: dict[int, int] = field(default_factory=dict)
    resting: set[int] = field(default_factory=set)


_bulk = _BulkWalk()


def bulk_walk_reset() -> None:
    """Forget the process's bulk cursors and project list (tests; a fresh start)."""
    global _bulk
    _bulk = _BulkWalk()


def _read_bulk_projects(cursor: Any, now: float) -> None:
    cursor.execute(BULK_PROJECTS)
    _bulk.projects = [row[0] for row in cursor.fetchall()]
    _bulk.read_at = now
    _bulk.resting.clear()


def _claim_bulk_share(cursor: Any, params: dict[str, Any]) -> list[Any]:
    awake = [p for p in _bulk.projects if p not in _bulk.resting]
    if not awake:
        return []
    limit = int(params["limit"])
    start = _bulk.turn % len(awake)
    chosen = (awake[start:] + awake[:start])[:limit]
    _bulk.turn += len(chosen)
    after = [_bulk.cursors.get(p, 0) for p in chosen]
    share = max(1, -(-limit // len(chosen)))
    cursor.execute(CLAIM_BULK_FAIRLY, {**params, "projects": chosen, "after": after, "share": share})
    rows = cursor.fetchall()
    furthest: dict[int, int] = {}
    for row in rows:
        furthest[row[1]] = max(furthest.get(row[1], 0), row[0])
    for project_id, was_after in zip(chosen, after, strict=True):
        if project_id in furthest:
            _bulk.cursors[project_id] = furthest[project_id]
        elif was_after:
            _bulk.cursors[project_id] = 0  # nothing ahead: wrap to the start next time
        else:
            _bulk.resting.add(project_id)  # nothing due at all, for now
    return rows


def _claim_bulk(cursor: Any, params: dict[str, Any]) -> list[Any]:
    now = time.monotonic()
    if now - _bulk.looked_behind_at >= LOOK_BEHIND_SECONDS:
        _bulk.looked_behind_at = now
        _bulk.cursors.clear()
    if now - _bulk.read_at >= PROJECTS_REFRESH_SECONDS:
        _read_bulk_projects(cursor, now)
    rows = _claim_bulk_share(cursor, params)
    if not rows and now - _bulk.read_at > 0:
        # Nothing where we looked: a project may have just started; look again, from the start.
        _read_bulk_projects(cursor, now)
        _bulk.cursors.clear()
        rows = _claim_bulk_share(cursor, params)
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
            rows = _claim_bulk(cursor, params)
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
