"""The batch runner: claim due steps, run them node by node, write outcomes in bulk.

One call handles up to ``WORKFLOWS_BATCH_SIZE`` steps in a handful of queries:

1. claim (own short transaction): due pending/waiting steps -> running, with a claim
   token and ``claimed_until``; FOR UPDATE SKIP LOCKED so runners never collide;
2. run (one transaction): re-read the claimed steps by token (a claim that expired and
   was taken over is skipped), lock their journeys, run each node group through its node
   type, and chain on: a step that leaves by a handle creates the next step, which runs in
   the same batch unless it waits (time, deliveries). New steps get ids from the sequence
   up front (send nodes key deliveries by step id) and are inserted at the end in one
   statement; claimed steps are updated in one statement; journeys and executions roll up.

Every effect of a step (tags, deliveries, next steps) commits in that one transaction, so
a worker killed mid-batch leaves the claimed steps untouched; the sweeper releases the
expired claim and the steps run again, once.

One bad step never holds the batch hostage (``step_faults``): a node that raises fails the
step it raised for (``node_runs``); a failure outside the nodes rolls the batch back and
runs it again in halves, down to the one step that fails alone; a step whose earlier
claims crashed runs in a small group, then alone, and after ``TIDINGS_POISON_AFTER_CRASHES``
crashes not at all.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import defaultdict
from datetime import datetime, timedelta
from functools import lru_cache, partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.core.dbcompat import int_array
from apps.core.errors import exception_reason
from apps.projects.models import Project
from apps.workflows import rollup, step_faults
from apps.workflows.context import BatchContext
from apps.workflows.graph import Graph
from apps.workflows.models import Step, WorkflowVersion
from apps.workflows.node_runs import node_run_guarded
from apps.workflows.nodes.base import Outcome, OutcomeKind
from apps.workflows.step_writes import steps_write
from apps.workflows.work import Work

log = logging.getLogger(__name__)

# A chain longer than this in one batch continues in the next batch (validation already
# refuses loops without a wait; this bounds the work one transaction does).
MAX_CHAIN = 32
# Steps whose earlier claims crashed (suspects) are claimed in small groups, and alone once
# one more crash would make them poison: a good step that shared a claim with a bad one is
# then never charged up to the budget, and a runner killed once (no bad step at all) gets
# its batch back at group speed rather than one step at a time.
SUSPECT_GROUP = 100
SOLO_SUSPECTS_PER_BATCH = 20


def batch_size() -> int:
    return int(getattr(settings, "WORKFLOWS_BATCH_SIZE", 2000))


def claim_seconds() -> int:
    return int(getattr(settings, "WORKFLOWS_CLAIM_SECONDS", 300))


@lru_cache(maxsize=256)
def version_graph(version_id: int) -> Graph:
    # Versions never change, so a process may keep their parsed graphs.
    return Graph.parse(WorkflowVersion.objects.values_list("graph", flat=True).get(pk=version_id))


CLAIM_SQL = """
-- statement_timestamp(), not clock_timestamp(): a volatile bound cannot be an index
-- condition, so every claim that found less than a full batch walked the whole due
-- index (every step waiting on a delivery or a timer) and fetched each heap row.
WITH due AS (
    SELECT id FROM workflows_step
    WHERE state IN ('pending', 'waiting') AND due_at <= statement_timestamp()
          AND crashes = 0
    ORDER BY due_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
)
UPDATE workflows_step s
SET state = 'running', claim_token = %s, claimed_until = clock_timestamp() + make_interval(secs => %s),
    attempts = s.attempts + 1
FROM due WHERE s.id = due.id
RETURNING s.id
"""
# Suspects are claimed through their own (nearly always empty) index; the literal
# "crashes > 0" lets the planner use it whatever the bounds.
CLAIM_SUSPECT_SQL = CLAIM_SQL.replace("crashes = 0", "crashes > 0 AND crashes BETWEEN %s AND %s")


def steps_claim(limit: int | None = None, *, crashes: tuple[int, int] | None = None) -> tuple[uuid.UUID, list[int]]:
    """Claim due steps that never crashed a claim, or those whose crashes lie in ``crashes``."""
    token = uuid.uuid4()
    params = [limit or batch_size(), token, claim_seconds()]
    with transaction.atomic(), connection.cursor() as cursor:
        if crashes is None:
            cursor.execute(CLAIM_SQL, params)
        else:
            cursor.execute(CLAIM_SUSPECT_SQL, [*crashes, *params])
        return token, [row[0] for row in cursor.fetchall()]


def suspects_due() -> bool:
    return Step.objects.filter(
        state__in=[Step.State.PENDING, Step.State.WAITING], crashes__gt=0, due_at__lte=timezone.now()
    ).exists()


def steps_run_batch(limit: int | None = None) -> int:
    """Claim and run one batch, then a few suspects alone; answers how many steps were claimed."""
    token, ids = steps_claim(limit)
    executions = steps_run_isolating(token, ids) if ids else set()
    last_chance = step_faults.poison_after() - 1
    suspects = 0
    if last_chance > 1:
        token, group = steps_claim(SUSPECT_GROUP, crashes=(1, last_chance - 1))
        suspects += len(group)
        executions |= steps_run_isolating(token, group) if group else set()
    for _ in range(SOLO_SUSPECTS_PER_BATCH if last_chance > 0 else 0):
        token, one = steps_claim(1, crashes=(last_chance, 32767))
        if not one:
            break
        suspects += 1
        executions |= steps_run_isolating(token, one)
    if executions:
        # Checked again after commit: two runners finishing an execution's last journeys
        # concurrently each see the other's still open inside their own transaction.
        rollup.executions_refresh(executions, timezone.now())
    return len(ids) + suspects


def steps_run_isolating(token: uuid.UUID, ids: list[int]) -> set[int]:
    """Run claimed steps; when the batch fails as a whole, run it again in halves.

    Halving finds one bad step in about 2·log2(n) runs, and every good half commits; the
    step that fails alone has its failure recorded. A failure that also stops recording
    (the database is gone) escapes, and the claims expire to be charged as crashes.
    """
    try:
        return steps_run_claimed(token, ids)
    except Exception as error:
        if len(ids) == 1:
            log.warning("step %s failed its batch on its own; recording the failure", ids[0], exc_info=True)
            return step_faults.step_fail_claimed(token, ids[0], error)
        log.warning("a batch of %d steps failed; running it again in halves", len(ids), exc_info=True)
    half = len(ids) // 2
    return steps_run_isolating(token, ids[:half]) | steps_run_isolating(token, ids[half:])


@transaction.atomic
def steps_run_claimed(token: uuid.UUID, ids: list[int]) -> set[int]:
    """Run claimed steps; answers the executions they belong to."""
    now = timezone.now()
    rows = _claimed_rows(token, ids)
    if not rows:
        return set()
    claimed = [
        Work(*r[:9], resumed=r[9], new=False, detail=_detail(r[10]), attempts=r[11])  # type: ignore[arg-type]
        for r in rows
    ]
    open_journeys = rollup.journeys_lock_open({w.journey_id for w in claimed})
    done: list[Work] = []
    current: list[Work] = []
    for work in claimed:
        if work.journey_id in open_journeys:
            current.append(work)
        else:
            _finish(work, Step.State.CANCELLED, "journey_closed", now)
            done.append(work)
    contexts: dict[int, BatchContext] = {}
    ended: dict[int, tuple[str, str]] = {}  # journey -> (state, reason) for stop / fail
    later: list[Work] = []
    while current:
        upcoming: list[Work] = []
        groups: dict[tuple[int, int, str], list[Work]] = defaultdict(list)
        for work in current:
            groups[(work.project_id, work.version_id, work.node_id)].append(work)
        for (project_id, version_id, node_id), members in groups.items():
            live = [w for w in members if w.journey_id not in ended]
            for work in members:
                if work.journey_id in ended:
                    _finish(work, Step.State.CANCELLED, "journey_closed", now)
            context = partial(_batch_context, contexts, project_id, claimed, now)
            result = node_run_guarded(node_id, live, context, partial(version_graph, version_id))
            for work in live:
                fault = result.faults.get(work.id)
                if fault is None:
                    try:
                        graph, ctx = version_graph(version_id), contexts[project_id]
                        upcoming += _apply(work, result.outcomes[work.id], graph, ctx, ended, now)
                        continue
                    except Exception as error:  # noqa: BLE001 - recorded on the step as its failure
                        fault = error
                _fault(work, fault, ended, now)
        done += current
        _allocate_ids(upcoming)
        current = [w for w in upcoming if w.depth < MAX_CHAIN]
        for work in upcoming:
            if work.depth >= MAX_CHAIN:
                work.state, work.due_at = Step.State.PENDING, now
                later.append(work)
    done += later
    steps_write(done, token, now)
    rollup.journeys_end(ended, now)
    settled, unsettled = _journeys_settled(done, open_journeys, ended)
    rollup.journeys_settle(settled, now)
    rollup.journeys_refresh(unsettled, now)
    executions = {w.execution_id for w in done}
    rollup.executions_refresh(executions, now)
    return executions


def _claimed_rows(token: uuid.UUID, ids: list[int]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT s.id, s.project_id, s.journey_id, s.execution_id, s.subscriber_id, e.version_id, s.node_id,
                   s.node_type, s.previous_id, s.waited, s.detail, s.attempts
            FROM workflows_step s JOIN workflows_execution e ON e.id = s.execution_id
            WHERE s.id = ANY(%s::bigint[]) AND s.claim_token = %s AND s.state = 'running'
            ORDER BY s.id
            FOR UPDATE OF s
            """,
            [int_array(ids), token],
        )
        return cursor.fetchall()


def _journeys_settled(
    done: list[Work], open_journeys: set[int], ended: dict[int, tuple[str, str]]
) -> tuple[dict[int, tuple[str, str]], set[int]]:
    """New (state, current node) of the open journeys whose every open step is in this batch.

    Where a version never forks, a journey has one open step at a time: the one this batch
    claimed, or the successor it created. Its state follows from this batch alone, with no
    read of its steps; journeys of forking versions are read back (``journeys_refresh``).
    Stopped, failed or already closed journeys are left to ``journeys_end``.
    """
    latest: dict[int, Work] = {}
    states: dict[int, set[str]] = defaultdict(set)
    unsettled: set[int] = set()
    for work in done:
        journey_id = work.journey_id
        if journey_id not in open_journeys or journey_id in ended:
            continue
        if not version_graph(work.version_id).single_path:
            unsettled.add(journey_id)
            continue
        states[journey_id].add(work.state)
        # Step ids only grow, so the newest step names the node the journey is at.
        if journey_id not in latest or work.id > latest[journey_id].id:
            latest[journey_id] = work
    settled: dict[int, tuple[str, str]] = {}
    for journey_id, work in latest.items():
        seen = states[journey_id]
        if Step.State.PENDING in seen or Step.State.RUNNING in seen:
            state = "active"
        elif Step.State.WAITING in seen:
            state = "waiting"
        else:
            state = "completed"
        settled[journey_id] = (state, work.node_id)
    return settled, unsettled


def _batch_context(
    contexts: dict[int, BatchContext], project_id: int, claimed: list[Work], now: datetime
) -> BatchContext:
    if project_id not in contexts:
        contexts[project_id] = _context(project_id, claimed, now)
    return contexts[project_id]


def _context(project_id: int, claimed: list[Work], now: datetime) -> BatchContext:
    project = Project.objects.get(pk=project_id)
    subscriber_ids = sorted({w.subscriber_id for w in claimed if w.project_id == project_id})
    return BatchContext(project=project, now=now, subscriber_ids=subscriber_ids)


def _apply(
    work: Work, outcome: Outcome, graph: Graph, ctx: BatchContext, ended: dict[int, tuple[str, str]], now: datetime
) -> list[Work]:
    if outcome.detail:
        work.detail.update(outcome.detail)
    kind = outcome.kind
    if kind == OutcomeKind.WAIT:
        work.state, work.due_at, work.waited, work.outcome = Step.State.WAITING, outcome.until, True, outcome.reason
        return []
    if kind == OutcomeKind.STOP:
        _finish(work, Step.State.DONE, outcome.reason[:64], now)
        ended[work.journey_id] = ("stopped", outcome.reason)
        return []
    if kind in (OutcomeKind.END, OutcomeKind.DROP):
        _finish(work, Step.State.DONE, outcome.reason[:64], now)
        return []
    if kind == OutcomeKind.FAIL:
        work.detail["error"] = outcome.reason
        _finish(work, Step.State.FAILED, outcome.reason[:64], now)
        if not outcome.handle:
            ended[work.journey_id] = ("failed", outcome.reason)
            return []
    else:
        _finish(work, Step.State.DONE, outcome.handle, now)
    ctx.finished.add((work.journey_id, work.node_id, outcome.handle or "next"))
    targets = graph.targets(work.node_id, outcome.handle or "next")
    return [
        Work(
            id=0,
            project_id=work.project_id,
            journey_id=work.journey_id,
            execution_id=work.execution_id,
            subscriber_id=work.subscriber_id,
            version_id=work.version_id,
            node_id=target,
            node_type=graph.node_type(target),
            previous_id=work.id,
            resumed=False,
            new=True,
            depth=work.depth + 1,
        )
        for target in targets
    ]


def _fault(work: Work, error: Exception, ended: dict[int, tuple[str, str]], now: datetime) -> None:
    """A step that raised: tried again later when the cause is transient, else it fails."""
    reason = exception_reason(error, step_faults.REASON_CHARS)
    work.detail["error"] = reason
    if step_faults.is_transient(error) and work.attempts < step_faults.MAX_ATTEMPTS:
        work.state, work.outcome, work.due_at = Step.State.PENDING, "retry", now + step_faults.RETRY_AFTER
        # A step that had waited resumes when it is tried again, not starts over.
        work.waited, work.finished_at = work.resumed, None
        if work.resumed:
            work.state = Step.State.WAITING
        return
    _finish(work, Step.State.FAILED, reason[:64], now)
    ended[work.journey_id] = ("failed", reason)


def _finish(work: Work, state: str, outcome: str, now: datetime) -> None:
    work.state, work.outcome, work.finished_at, work.due_at = state, outcome, now, work.due_at or now


def _allocate_ids(works: list[Work]) -> None:
    if not works:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence('workflows_step', 'id')) FROM generate_series(1, %s)", [len(works)]
        )
        for work, (step_id,) in zip(works, cursor.fetchall(), strict=True):
            work.id = step_id


def _detail(value: Any) -> dict[str, Any]:
    # jsonb arrives as text through a raw cursor (Django decodes JSON in the field, not the driver).
    if isinstance(value, str):
        return dict(json.loads(value))
    return dict(value or {})


def due_step_count(horizon: timedelta = timedelta(0)) -> int:
    return Step.objects.filter(
        state__in=[Step.State.PENDING, Step.State.WAITING], due_at__lte=timezone.now() + horizon
    ).count()
