"""Waking the router after a commit, at most one pending wake-up per project and lane.

Under load hundreds of notifications commit per second; one Celery message each would
cost the API more than the INSERTs do. A short-lived flag in Redis (SET NX) lets only the
first commit send a message; the relay task clears the flag *before* it claims, so a row
committed after the claim began always sends a fresh wake-up. If a message is lost the
flag expires and the beat sweeper relays the rows anyway: the outbox is the record.
"""

from __future__ import annotations

from django.core.cache import cache

WAKE_FLAG_SECONDS = 5


def wake_flag(project_id: int, lane: str) -> str:
    return f"notifications:relay-wake:{project_id}:{lane}"


def relay_wake(*, project_id: int, lane: str) -> bool:
    from apps.notifications.tasks import relay_outbox

    if not cache.add(wake_flag(project_id, lane), 1, WAKE_FLAG_SECONDS):
        return False
    relay_outbox.apply_async(args=[project_id, lane], queue=lane)
    return True


def relay_wake_clear(*, project_id: int, lane: str) -> None:
    cache.delete(wake_flag(project_id, lane))
