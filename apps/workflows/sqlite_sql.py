"""The journey engine's set-based statements for SQLite (``make run``).

Postgres runs the statements in engine.py, rollup.py and services.py as written. SQLite
has no arrays, unnest, LATERAL, data-modifying CTEs, sequences or SKIP LOCKED, so each
gets a variant here with the same effect: lists travel as one JSON parameter, times as
Django's text form (so they compare in order), and the runner's claim is a plain
``UPDATE ... RETURNING`` (the IMMEDIATE transaction already holds SQLite's single write
lock, so two runners can never claim the same step).
"""

# Assembled only from the constant fragments below; values travel as parameters.
# ruff: noqa: S608
from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from apps.core.dbcompat import IN_JSON, ids_json, ts


def steps_claim(token: uuid.UUID, limit: int, seconds: int, now: datetime) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE workflows_step SET state = 'running', claim_token = %s, claimed_until = %s,"
            " attempts = attempts + 1 WHERE id IN (SELECT id FROM workflows_step"
            " WHERE state IN ('pending', 'waiting') AND due_at <= %s ORDER BY due_at LIMIT %s) RETURNING id",
            [token.hex, ts(now + timedelta(seconds=seconds)), ts(now), limit],
        )
        return sorted(row[0] for row in cursor.fetchall())


def step_ids_allocate(count: int) -> list[int]:
    """Ids for steps written later in this transaction (the single writer makes it safe)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'workflows_step'), 0),"
            " coalesce((SELECT max(id) FROM workflows_step), 0))"
        )
        base = int(cursor.fetchone()[0])
        # Record the reservation, so a plain INSERT in between cannot take these ids.
        cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = 'workflows_step'", [base + count])
        if cursor.rowcount == 0:
            cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('workflows_step', %s)", [base + count])
    return list(range(base + 1, base + count + 1))


def steps_insert(columns: list[list[Any]], now: datetime) -> None:
    """``columns`` as engine._columns builds them for the Postgres unnest."""
    rows = [
        (*row[:9], ts(row[9]), row[10], row[11], row[12], ts(row[13]), ts(now)) for row in zip(*columns, strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO workflows_step (id, project_id, journey_id, execution_id, subscriber_id, previous_id,"
            " node_id, node_type, state, due_at, outcome, detail, attempts, waited, finished_at, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 1, %s, %s, %s)",
            rows,
        )


def steps_update(rows: Sequence[tuple[int, str, datetime, str, str, bool, datetime | None]], token: uuid.UUID) -> None:
    """(id, state, due_at, outcome, detail json, waited, finished_at) for steps this runner holds."""
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE workflows_step SET state = %s, due_at = %s, outcome = %s, detail = %s, waited = %s,"
            " finished_at = %s, claim_token = NULL, claimed_until = NULL WHERE id = %s AND claim_token = %s",
            [
                (state, ts(due), outcome, detail, waited, ts(fin), pk, token.hex)
                for pk, state, due, outcome, detail, waited, fin in rows
            ],
        )


def steps_release_expired(max_attempts: int, now: datetime) -> list[tuple[int, int, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE workflows_step"
            " SET state = CASE WHEN attempts >= %s THEN 'failed' WHEN waited THEN 'waiting' ELSE 'pending' END,"
            " outcome = CASE WHEN attempts >= %s THEN 'too_many_attempts' ELSE outcome END,"
            " finished_at = CASE WHEN attempts >= %s THEN %s ELSE finished_at END,"
            " due_at = min(due_at, %s), claim_token = NULL, claimed_until = NULL"
            " WHERE state = 'running' AND claimed_until < %s RETURNING journey_id, execution_id, state",
            [max_attempts, max_attempts, max_attempts, ts(now), ts(now), ts(now)],
        )
        return cursor.fetchall()


def steps_cancel_open(journey_ids: list[int], now: datetime) -> list[tuple[int, int, bool]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE workflows_step SET state = 'cancelled', outcome = 'journey_closed', finished_at = %s,"
            " claim_token = NULL, claimed_until = NULL"
            f" WHERE journey_id {IN_JSON} AND state IN ('pending', 'waiting', 'running')"
            " RETURNING id, project_id, waited AND json_type(detail, '$.deliveries') IS NOT NULL",
            [ts(now), ids_json(journey_ids)],
        )
        return cursor.fetchall()


def journeys_refresh(journey_ids: list[int], now: datetime) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE workflows_journey AS j
            SET state = CASE WHEN j.state NOT IN ('active', 'waiting') THEN j.state
                             WHEN agg.live > 0 THEN 'active' WHEN agg.waiting > 0 THEN 'waiting'
                             ELSE 'completed' END,
                finished_at = CASE WHEN j.state NOT IN ('active', 'waiting') THEN j.finished_at
                                   WHEN agg.live + agg.waiting = 0 THEN %s ELSE NULL END,
                current_node = CASE WHEN j.state NOT IN ('active', 'waiting') THEN j.current_node
                                    ELSE agg.last_node END
            FROM (
                SELECT ids.value AS journey_id,
                       (SELECT count(*) FROM workflows_step s WHERE s.journey_id = ids.value
                          AND s.state IN ('pending', 'running')) AS live,
                       (SELECT count(*) FROM workflows_step s WHERE s.journey_id = ids.value
                          AND s.state = 'waiting') AS waiting,
                       (SELECT s.node_id FROM workflows_step s WHERE s.journey_id = ids.value
                          ORDER BY s.id DESC LIMIT 1) AS last_node
                FROM json_each(%s) AS ids
            ) AS agg
            WHERE j.id = agg.journey_id
            """,
            [ts(now), ids_json(journey_ids)],
        )


def executions_refresh(execution_ids: list[int], now: datetime) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE workflows_execution AS e SET state = 'completed', finished_at = %s WHERE e.id {IN_JSON}"
            " AND e.state = 'running' AND NOT EXISTS (SELECT 1 FROM workflows_journey j"
            " WHERE j.execution_id = e.id AND j.state IN ('active', 'waiting'))",
            [ts(now), ids_json(execution_ids)],
        )
        return cursor.rowcount


def journeys_enter(params: dict[str, Any], now: datetime) -> int:
    """Journeys and their start steps for ``params["ids"]``; answers how many entered."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO workflows_journey (project_id, execution_id, workflow_id, subscriber_id, state,"
            " current_node, exclusive, stop_reason, created_at)"
            " SELECT %s, %s, %s, value, 'active', %s, %s, '', %s FROM json_each(%s) WHERE true"
            " ON CONFLICT DO NOTHING RETURNING id, subscriber_id",
            [
                params["p"],
                params["e"],
                params["w"],
                params["start"],
                params["exclusive"],
                ts(now),
                ids_json(params["ids"]),
            ],
        )
        entered = cursor.fetchall()
        cursor.executemany(
            "INSERT INTO workflows_step (project_id, journey_id, execution_id, subscriber_id, node_id, node_type,"
            " state, due_at, outcome, detail, attempts, waited, created_at)"
            " VALUES (%s, %s, %s, %s, %s, 'start', 'pending', %s, '', '{}', 0, false, %s)",
            [(params["p"], jid, params["e"], sid, params["start"], ts(now), ts(now)) for jid, sid in entered],
        )
    return len(entered)
