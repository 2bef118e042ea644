"""Housekeeping tasks scheduled by beat."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import beat_init, before_task_publish
from django.utils import timezone

from apps.core.idempotency import idempotency_records_sweep
from apps.core.models import Heartbeat

HEARTBEAT_TASK = "core.heartbeat"


@before_task_publish.connect
def _record_beat_heartbeat(sender: str | None = None, **_: Any) -> None:
    # Only beat publishes the heartbeat task, so publishing it proves beat is alive;
    # running it (below) proves a worker is.
    if sender == HEARTBEAT_TASK:
        Heartbeat.objects.update_or_create(name="beat", defaults={"at": timezone.now()})


@shared_task(name=HEARTBEAT_TASK, ignore_result=True, expires=60)
def heartbeat() -> None:
    Heartbeat.objects.update_or_create(name="worker", defaults={"at": timezone.now()})


@beat_init.connect
def _heartbeat_at_start(**_: Any) -> None:
    # /health turns healthy as soon as beat and a worker are up, not an interval later.
    heartbeat.apply_async()


@shared_task(name="core.idempotency_sweep", ignore_result=True)
def idempotency_sweep() -> int:
    return idempotency_records_sweep()
