"""The runner's two writes per batch: the steps it created, and the steps it claimed."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import connection

from apps.workflows.models import Step

if TYPE_CHECKING:
    from apps.workflows.work import Work


def steps_write(done: list[Work], token: uuid.UUID, now: datetime) -> None:
    """One INSERT of the steps this batch created, one UPDATE of the steps it claimed.

    Rows travel as one JSON document each way: dumping a dozen Python lists into array
    literals cost more than the statements themselves.
    """
    fresh = [w for w in done if w.new]
    old = [w for w in done if not w.new]
    stamp = _stamper(now)
    with connection.cursor() as cursor:
        if fresh:
            cursor.execute(
                """
                INSERT INTO workflows_step (
                    id, project_id, journey_id, execution_id, subscriber_id, previous_id, node_id, node_type,
                    state, due_at, outcome, detail, attempts, waited, created_at, finished_at)
                SELECT id, project_id, journey_id, execution_id, subscriber_id, previous_id, node_id, node_type,
                       state, COALESCE(due_at, %(now)s), outcome, detail, 1, waited, %(now)s, finished_at
                FROM json_to_recordset(%(rows)s::json)
                     AS t(id bigint, project_id bigint, journey_id bigint, execution_id bigint, subscriber_id bigint,
                          previous_id bigint, node_id text, node_type text, state text, due_at timestamptz,
                          outcome text, detail jsonb, waited boolean, finished_at timestamptz)
                """,
                {"now": now, "rows": json.dumps([_fresh_row(w, stamp) for w in fresh])},
            )
        if old:
            cursor.execute(
                """
                UPDATE workflows_step s
                SET state = t.state, due_at = COALESCE(t.due_at, %(now)s), outcome = t.outcome, detail = t.detail,
                    waited = t.waited, finished_at = t.finished_at, claim_token = NULL, claimed_until = NULL,
                    crashes = 0
                FROM json_to_recordset(%(rows)s::json) AS t(id bigint, state text, due_at timestamptz,
                                                         outcome text, detail jsonb, waited boolean,
                                                         finished_at timestamptz)
                WHERE s.id = t.id AND s.claim_token = %(token)s
                """,
                {"now": now, "rows": json.dumps([_claimed_row(w, stamp) for w in old]), "token": token},
            )


def _stamper(now: datetime) -> Callable[[datetime | None], str | None]:
    # Most steps of a batch finish (and come due) at the batch's ``now``: format it once.
    formatted = now.isoformat()

    def stamp(value: datetime | None) -> str | None:
        if value is None:
            return None
        return formatted if value is now else value.isoformat()

    return stamp


def _fresh_row(w: Work, stamp: Callable[[datetime | None], str | None]) -> dict[str, Any]:
    return {
        "id": w.id,
        "project_id": w.project_id,
        "journey_id": w.journey_id,
        "execution_id": w.execution_id,
        "subscriber_id": w.subscriber_id,
        "previous_id": w.previous_id,
        "node_id": w.node_id,
        "node_type": w.node_type,
        "state": w.state if w.state != Step.State.RUNNING else Step.State.PENDING,
        "due_at": stamp(w.due_at),
        "outcome": w.outcome,
        "detail": w.detail,
        "waited": w.waited,
        "finished_at": stamp(w.finished_at),
    }


def _claimed_row(w: Work, stamp: Callable[[datetime | None], str | None]) -> dict[str, Any]:
    return {
        "id": w.id,
        "state": w.state,
        "due_at": stamp(w.due_at),
        "outcome": w.outcome,
        "detail": w.detail,
        "waited": w.waited,
        "finished_at": stamp(w.finished_at),
    }
