"""Thin Celery tasks: wake-ups for the batch runner, expansion chunks, the minute sweep.

A task message is never the only copy of intent: steps and executions live in Postgres,
and the sweep re-wakes anything due, unclaimed or abandoned.
"""

from __future__ import annotations

import logging
import time

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.projects.models import Project
from apps.workflows import engine, rollup, step_faults
from apps.workflows.models import Execution
from apps.workflows.services import execution_expand_chunk

log = logging.getLogger(__name__)

QUEUE = "journeys"
# Set when runners are queued, cleared when one starts: a burst of commits (every delivery
# batch wakes its steps) queues runners once instead of once per commit, and a commit
# after a runner started always queues a fresh one, so no due step is left unattended.
WAKE_FLAG = "tidings:workflows:wake"
WAKE_FLAG_TTL_SECONDS = 30
# A task gives the worker back after this long and re-queues itself if work remains.
TIME_BUDGET_SECONDS = 20.0


def wake_runners(count: int | None = None) -> None:
    from apps.delivery.redis_client import get_redis

    try:
        fresh = bool(get_redis().set(WAKE_FLAG, 1, nx=True, ex=WAKE_FLAG_TTL_SECONDS))
    except Exception:
        log.warning("wake flag unavailable; waking runners unconditionally", exc_info=True)
        fresh = True
    if fresh:
        for _ in range(count or int(getattr(settings, "WORKFLOWS_RUNNERS", 2))):
            run_steps.apply_async(queue=QUEUE)


def _clear_wake_flag() -> None:
    from apps.delivery.redis_client import get_redis

    try:
        get_redis().delete(WAKE_FLAG)
    except Exception:
        log.warning("could not clear the wake flag", exc_info=True)


@shared_task(name="workflows.run_steps", ignore_result=True)
def run_steps() -> int:
    _clear_wake_flag()
    # Claims of a runner that died are released here too, not only by the minute sweep.
    step_faults.steps_release_expired()
    started = time.monotonic()
    total = 0
    while True:
        claimed = engine.steps_run_batch()
        total += claimed
        # Suspects run a few per batch; a runner stops only once none are left either.
        if claimed < engine.batch_size() and not engine.suspects_due():
            return total
        if time.monotonic() - started > TIME_BUDGET_SECONDS:
            run_steps.apply_async(queue=QUEUE)
            return total


@shared_task(name="workflows.expand_execution", ignore_result=True)
def expand_execution(project_id: int, execution_id: int) -> None:
    project = Project.objects.get(pk=project_id)
    started = time.monotonic()
    while execution_expand_chunk(project=project, execution_id=execution_id):
        if time.monotonic() - started > TIME_BUDGET_SECONDS:
            expand_execution.apply_async((project_id, execution_id), queue=QUEUE)
            return


@shared_task(name="workflows.sweep", ignore_result=True)
def sweep() -> None:
    """Every minute: release dead claims, resume due waits, finish stuck expansions."""
    step_faults.steps_release_expired()
    stale = timezone.now() - timezone.timedelta(minutes=2)
    for project_id, execution_id in Execution.objects.filter(
        state__in=[Execution.State.PENDING, Execution.State.EXPANDING], created_at__lt=stale
    ).values_list("project_id", "pk"):
        expand_execution.apply_async((project_id, execution_id), queue=QUEUE)
    running = Execution.objects.filter(state=Execution.State.RUNNING).values_list("pk", flat=True)
    rollup.executions_refresh(list(running), timezone.now())
    if engine.due_step_count():
        wake_runners()
