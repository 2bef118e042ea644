"""Thin Celery tasks: ids in, one service call, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from apps.subscribers.services.imports import import_run, imports_sweep


# Queued on "default" by import_create (apply_async(queue=...)).
@shared_task(name="subscribers.import_run", acks_late=True)
def import_run_task(project_id: int, job_id: int) -> None:
    import_run(project_id=project_id, job_id=job_id)


@shared_task(name="subscribers.imports_sweep")
def imports_sweep_task() -> int:
    return imports_sweep()
