"""Thin Celery tasks: wake-ups for the batch runner, expansion chunks, the minute sweep.

A task message is never the only copy of intent: steps and executions live in Postgres,
and the sweep re-wakes anything due, unclaimed or abandoned.
"""

from __future__ import annotations

import time

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.projects.models import Project
from apps.workflows import engine, rollup
from apps.workflows.models import Execution
from apps.workflows.services import execution_expand_chunk

QUEUE = "journeys"
# A task gives the worker back after this long and re-queues itself if work remains.
TIME_BUDGET_SECONDS = 20.0


def wake_runners(count: int | None = None) -> None:
    for _ in range(count or int(getattr(settings, "WORKFLOWS_RUNNERS", 2))):
        run_steps.delay()


@shared_task(name="workflows.run_steps", queue=QUEUE, ignore_result=True)
def run_steps() -> int:
    started = time.monotonic()
    total = 0
    while True:
        claimed = engine.steps_run_batch()
        total += claimed
        if claimed < engine.batch_size():
            return total
        if time.monotonic() - started > TIME_BUDGET_SECONDS:
            run_steps.delay()
            return total


@shared_task(name="workflows.expand_execution", queue=QUEUE, ignore_result=True)
def expand_execution(project_id: int, execution_id: int) -> None:
    project = Project.objects.get(pk=project_id)
    started = time.monotonic()
    while execution_expand_chunk(project=project, execution_id=execution_id):
        if time.monotonic() - started > TIME_BUDGET_SECONDS:
            expand_execution.delay(project_id, execution_id)
            return


@shared_task(name="workflows.sweep", queue=QUEUE, ignore_result=True)
def sweep() -> None:
    """Every minute: release dead claims, resume due waits, finish stuck expansions."""
    engine.steps_release_expired()
    stale = timezone.now() - timezone.timedelta(minutes=2)
    for project_id, execution_id in Execution.objects.filter(
        state__in=[Execution.State.PENDING, Execution.State.EXPANDING], created_at__lt=stale
    ).values_list("project_id", "pk"):
        expand_execution.delay(project_id, execution_id)
    running = Execution.objects.filter(state=Execution.State.RUNNING).values_list("pk", flat=True)
    rollup.executions_refresh(list(running), timezone.now())
    if engine.due_step_count():
        wake_runners()
