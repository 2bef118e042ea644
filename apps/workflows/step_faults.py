"""When running a step goes wrong: its failure recorded on that step, and claims that died.

A node that raises for one subscriber fails that one step (the engine retries the node's
group one step at a time to find it); a failure outside the nodes is pinned on the one
step that fails alone when the batch runs again in halves. A runner that died (killed, out of memory)
leaves its claim to expire: ``steps_release_expired`` gives the steps back and charges
each one crash, so they run in small groups and then alone, and a step that crashed
``TIDINGS_POISON_AFTER_CRASHES`` times ends failed as "poison" instead of running again.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from apps.core.errors import exception_reason
from apps.workflows import rollup

# Failures that say nothing about the step (a lock or statement timeout, a lost
# connection, a deadlock): the step is tried again later, within its attempt budget.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (OperationalError, RedisConnectionError, RedisTimeoutError)
RETRY_AFTER = timedelta(seconds=30)
# Claims of one step; a transient failure past this fails the step for good.
MAX_ATTEMPTS = 5
POISON = "poison"
# Long enough to recognise the failure by, short enough for a step's detail.
REASON_CHARS = 500


def poison_after() -> int:
    return max(1, int(getattr(settings, "TIDINGS_POISON_AFTER_CRASHES", 3)))


def is_transient(error: BaseException) -> bool:
    return isinstance(error, TRANSIENT_ERRORS)


@transaction.atomic
def step_fail_claimed(token: uuid.UUID, step_id: int, error: BaseException) -> set[int]:
    """Record ``error`` on one claimed step that failed even when run alone.

    A transient error puts the step back (waiting again if it had waited) for a later
    attempt; any other fails it and its journey. Answers the step's execution.
    """
    reason = exception_reason(error, REASON_CHARS)
    retry = is_transient(error)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE workflows_step
            SET state = CASE WHEN %(retry)s AND attempts < %(max)s
                             THEN CASE WHEN waited THEN 'waiting' ELSE 'pending' END ELSE 'failed' END,
                outcome = CASE WHEN %(retry)s AND attempts < %(max)s THEN 'retry' ELSE %(outcome)s END,
                due_at = CASE WHEN %(retry)s AND attempts < %(max)s THEN now() + %(later)s ELSE due_at END,
                finished_at = CASE WHEN %(retry)s AND attempts < %(max)s THEN NULL ELSE now() END,
                detail = detail || jsonb_build_object('error', %(reason)s::text),
                claim_token = NULL, claimed_until = NULL, crashes = 0
            WHERE id = %(id)s AND claim_token = %(token)s AND state = 'running'
            RETURNING journey_id, execution_id, state
            """,
            {
                "retry": retry,
                "max": MAX_ATTEMPTS,
                "later": RETRY_AFTER,
                "outcome": reason[:64],
                "reason": reason,
                "id": step_id,
                "token": token,
            },
        )
        rows = cursor.fetchall()
    now = timezone.now()
    failed = {journey: ("failed", reason) for journey, _, state in rows if state == "failed"}
    if failed:
        rollup.journeys_lock_open(set(failed))
        rollup.journeys_end(failed, now)
    return {execution for _, execution, _ in rows}


def steps_release_expired(max_attempts: int = MAX_ATTEMPTS) -> int:
    """Give back claims whose runner died, charging each step one crash.

    A step that reached the crash budget, or its attempt budget, fails instead of going
    back: a step that keeps killing runners must not take every batch it joins down.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE workflows_step
            SET crashes = crashes + 1,
                state = CASE WHEN crashes + 1 >= %(poison)s OR attempts >= %(max)s THEN 'failed'
                             WHEN waited THEN 'waiting' ELSE 'pending' END,
                outcome = CASE WHEN crashes + 1 >= %(poison)s THEN 'poison'
                               WHEN attempts >= %(max)s THEN 'too_many_attempts' ELSE outcome END,
                detail = CASE WHEN crashes + 1 >= %(poison)s
                              THEN detail || jsonb_build_object('error', %(poison_reason)s::text) ELSE detail END,
                finished_at = CASE WHEN crashes + 1 >= %(poison)s OR attempts >= %(max)s THEN now()
                                   ELSE finished_at END,
                due_at = LEAST(due_at, now()), claim_token = NULL, claimed_until = NULL
            WHERE state = 'running' AND claimed_until < statement_timestamp()
            RETURNING journey_id, execution_id, state, outcome
            """,
            {
                "poison": poison_after(),
                "max": max_attempts,
                "poison_reason": f"poison: its batch crashed {poison_after()} times before the step finished",
            },
        )
        rows = cursor.fetchall()
        _released_failures(rows)
    return len(rows)


def _released_failures(rows: list[tuple[int, int, str, str]]) -> None:
    failed = {journey: ("failed", outcome) for journey, _, state, outcome in rows if state == "failed"}
    if failed:
        now = timezone.now()
        rollup.journeys_lock_open(set(failed))
        rollup.journeys_end(failed, now)
        rollup.executions_refresh({execution for _, execution, _, _ in rows}, now)
