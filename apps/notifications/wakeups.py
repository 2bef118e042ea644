"""Waking the router after a commit, at most one pending wake-up per project and lane.

Under load hundreds of notifications commit per second; one Celery message each would
cost the API more than the INSERTs do. A short-lived flag in Redis (SET NX) lets only the
first commit send a message; the relay task clears the flag *before* it claims, so a row
committed after the claim began always sends a fresh wake-up. If a message is lost the
flag expires and the beat sweeper relays the rows anyway: the outbox is the record.
"""

from __future__ import annotations

import logging

from apps.delivery.redis_client import get_redis

log = logging.getLogger(__name__)
WAKE_FLAG_SECONDS = 5


def wake_flag(project_id: int, lane: str) -> str:
    return f"tidings:notifications:relay-wake:{project_id}:{lane}"


def relay_wake(*, project_id: int, lane: str) -> bool:
    # The process-wide client, not Django's cache: that one builds a redis.Redis object per
    # call, which costs more CPU than the round trip on this path.
    from apps.notifications.tasks import relay_outbox

    try:
        fresh = get_redis().set(wake_flag(project_id, lane), 1, nx=True, ex=WAKE_FLAG_SECONDS)
    except Exception:  # Redis down: wake anyway, the outbox row is safe
        log.warning("relay wake flag unavailable; waking unconditionally", exc_info=True)
        fresh = True
    if not fresh:
        return False
    relay_outbox.apply_async(args=[project_id, lane], queue=lane)
    return True


def relay_wake_clear(*, project_id: int, lane: str) -> None:
    get_redis().delete(wake_flag(project_id, lane))
