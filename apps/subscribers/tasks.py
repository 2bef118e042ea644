"""Thin Celery tasks: ids in, one service call, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from apps.subscribers.services.imports import import_run


@shared_task(name="subscribers.import_run", acks_late=True, queue="default")
def import_run_task(project_id: int, job_id: int) -> None:
    import_run(project_id=project_id, job_id=job_id)
