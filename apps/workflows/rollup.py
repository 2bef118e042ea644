"""Statuses roll up step -> journey -> execution, set-based, inside the caller's transaction."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db import connection

from apps.core.dbcompat import int_array
from apps.workflows.models import Journey, Step

ORIGIN_KIND = "journey_step"


def journeys_lock_open(journey_ids: Iterable[int]) -> set[int]:
    """Lock the journeys (in id order, so runners never deadlock); answer the open ones."""
    ids = sorted(set(journey_ids))
    if not ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, state FROM workflows_journey WHERE id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE",
            [int_array(ids)],
        )
        rows = cursor.fetchall()
    return {pk for pk, state in rows if state in Journey.OPEN_STATES}


def journeys_end(ended: dict[int, tuple[str, str]], now: datetime) -> None:
    """Stop or fail journeys: close them and cancel every step and delivery still open."""
    if not ended:
        return
    by_outcome: dict[tuple[str, str], list[int]] = defaultdict(list)
    for journey_id, (state, reason) in ended.items():
        by_outcome[(state, reason[:255])].append(journey_id)
    for (state, reason), ids in by_outcome.items():
        Journey.objects.filter(pk__in=ids, state__in=Journey.OPEN_STATES).update(
            state=state, stop_reason=reason, finished_at=now
        )
    steps_cancel_open(list(ended), now)
    executions_refresh(
        Journey.objects.filter(pk__in=list(ended)).values_list("execution_id", flat=True).distinct(), now
    )


def steps_cancel_open(journey_ids: list[int], now: datetime) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE workflows_step SET state = 'cancelled', outcome = 'journey_closed', finished_at = %s,
                   claim_token = NULL, claimed_until = NULL
            WHERE journey_id = ANY(%s) AND state IN ('pending', 'waiting', 'running')
            RETURNING id, project_id, waited AND detail ? 'deliveries'
            """,
            [now, journey_ids],
        )
        rows = cursor.fetchall()
    return _deliveries_cancel_for(rows)


def _deliveries_cancel_for(rows: list[tuple[int, int, bool]]) -> int:
    waiting_by_project: dict[int, list[str]] = defaultdict(list)
    for step_id, project_id, awaiting_deliveries in rows:
        # Only send steps that are waiting on deliveries have messages to call back.
        if awaiting_deliveries:
            waiting_by_project[project_id].append(str(step_id))
    if waiting_by_project:
        from apps.delivery.services import deliveries_cancel
        from apps.projects.models import Project

        for project in Project.objects.filter(pk__in=waiting_by_project):
            deliveries_cancel(project=project, origin_kind=ORIGIN_KIND, origin_ids=waiting_by_project[project.pk])
    return len(rows)


def journeys_refresh(journey_ids: Iterable[int], now: datetime) -> None:
    """Open journeys take the state of their open steps; with none left they complete."""
    ids = sorted(set(journey_ids))
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE workflows_journey j
            SET state = CASE WHEN j.state NOT IN ('active', 'waiting') THEN j.state
                             WHEN agg.live > 0 THEN 'active' WHEN agg.waiting > 0 THEN 'waiting'
                             ELSE 'completed' END,
                finished_at = CASE WHEN j.state NOT IN ('active', 'waiting') THEN j.finished_at
                                   WHEN agg.live + agg.waiting = 0 THEN %s ELSE NULL END,
                current_node = CASE WHEN j.state NOT IN ('active', 'waiting') THEN j.current_node
                                    ELSE agg.last_node END
            FROM (
                -- Driven by the ids, through the step index per journey. No state filter in
                -- the WHERE: while journeys pour in, stale statistics make a state index look
                -- empty, and a plan built on it scans every open journey per id.
                SELECT jid AS journey_id, s.live, s.waiting, s.last_node
                FROM unnest(%s::bigint[]) AS jid
                CROSS JOIN LATERAL (
                    SELECT count(*) FILTER (WHERE state IN ('pending', 'running')) AS live,
                           count(*) FILTER (WHERE state = 'waiting') AS waiting,
                           (array_agg(node_id ORDER BY id DESC))[1] AS last_node
                    FROM workflows_step WHERE journey_id = jid
                ) s
            ) agg
            WHERE j.id = agg.journey_id
            """,
            [now, ids],
        )


def journeys_settle(settled: dict[int, tuple[str, str]], now: datetime) -> None:
    """Set journeys to a state the runner already knows: (state, current node) each.

    Only for journeys the caller has locked (``journeys_lock_open``) and found open.
    """
    if not settled:
        return
    rows = [{"id": journey_id, "state": state, "node": node} for journey_id, (state, node) in settled.items()]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE workflows_journey j
            SET state = t.state, current_node = t.node,
                finished_at = CASE WHEN t.state = 'completed' THEN %(now)s ELSE NULL END
            FROM json_to_recordset(%(rows)s::json) AS t(id bigint, state text, node text)
            -- No state filter: the caller holds these journeys locked and knows them open, and
            -- while journeys pour in, stale statistics make the state index look empty, so a
            -- plan built on it would scan every open journey per batch.
            WHERE j.id = t.id
            """,
            {"now": now, "rows": json.dumps(rows)},
        )


def executions_refresh(execution_ids: Iterable[int], now: datetime) -> int:
    """A running (fully expanded) execution completes when its last journey does."""
    ids = sorted(set(execution_ids))
    if not ids:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE workflows_execution e SET state = 'completed', finished_at = %s
            WHERE e.id = ANY(%s) AND e.state = 'running'
              AND NOT EXISTS (
                  SELECT 1 FROM workflows_journey j WHERE j.execution_id = e.id AND j.state IN ('active', 'waiting'))
            """,
            [now, ids],
        )
        return cursor.rowcount


def step_open_count(journey_id: int) -> int:
    return Step.objects.filter(journey_id=journey_id, state__in=Step.OPEN_STATES).count()
