"""Thin tasks: relay the outbox into deliveries, sweep what a lost wake-up left behind."""

from __future__ import annotations

import time

from celery import shared_task

from apps.notifications.router import outbox_relay, outbox_sweep
from apps.notifications.wakeups import relay_wake, relay_wake_clear
from apps.projects.models import Project

# A relay under sustained load always finds more rows; it yields its slot after this long.
RELAY_RUN_SECONDS = 10


@shared_task(name="notifications.relay_outbox", ignore_result=True, acks_late=True)
def relay_outbox(project_id: int, lane: str) -> int:
    relay_wake_clear(project_id=project_id, lane=lane)
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return 0
    relayed = 0
    deadline = time.monotonic() + RELAY_RUN_SECONDS
    while count := outbox_relay(project=project, lane=lane):
        relayed += count
        if time.monotonic() > deadline:
            # Give the worker slot back; a fresh wake-up carries on with the rest.
            relay_wake_clear(project_id=project_id, lane=lane)
            relay_wake(project_id=project_id, lane=lane)
            break
    return relayed


@shared_task(name="notifications.relay_sweep", ignore_result=True)
def relay_sweep() -> int:
    return outbox_sweep()


@shared_task(name="notifications.broadcast_fanout", ignore_result=True, acks_late=True)
def broadcast_fanout(project_id: int, broadcast_id: int) -> int:
    from apps.notifications.broadcasts import broadcast_enqueue

    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return 0
    return broadcast_enqueue(project=project, broadcast_id=broadcast_id)


@shared_task(name="notifications.broadcast_sweep", ignore_result=True)
def broadcast_sweep() -> int:
    """Fan out broadcasts whose task message was lost (accepted over a minute ago)."""
    from datetime import timedelta

    from django.utils import timezone

    from apps.notifications.broadcasts import broadcast_enqueue
    from apps.notifications.models import Broadcast

    stale = Broadcast.objects.filter(
        state=Broadcast.State.ACCEPTED, created_at__lt=timezone.now() - timedelta(minutes=1)
    ).values_list("project_id", "id")[:100]
    total = 0
    for project_id, broadcast_id in stale:
        project = Project.objects.get(pk=project_id)
        total += broadcast_enqueue(project=project, broadcast_id=broadcast_id)
    return total
