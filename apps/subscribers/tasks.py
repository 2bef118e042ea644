"""Thin Celery tasks: ids in, one service call, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from apps.subscribers.services.imports import import_run


# Queued on "default" by import_create (apply_async(queue=...)).
@shared_task(name="subscribers.import_run", acks_late=True)
def import_run_task(project_id: int, job_id: int) -> None:
    import_run(project_id=project_id, job_id=job_id)
