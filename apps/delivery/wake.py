"""Wake-ups: a Celery message that tells a lane's dispatcher there is work.

The rows are the queue of record; a wake-up is only a hint. A Redis flag per lane keeps
a burst of commits from flooding the broker with duplicate wake-ups: the flag is set when a
wake-up is queued and cleared by the dispatcher when it starts, so a commit after that
point queues a fresh one and no work is ever left without a dispatcher coming for it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction

from apps.delivery.redis_client import get_redis

log = logging.getLogger(__name__)

LANES = ("high", "normal", "bulk")
DISPATCH_TASK = "delivery.dispatch_lane"
FLAG_TTL_SECONDS = 30


def _flag(lane: str) -> str:
    return f"tidings:delivery:wake:{lane}"


def wake_now(lanes: Iterable[str], *, force: bool = False) -> None:
    from config.celery import app

    lanes = sorted(set(lanes))
    if not lanes:
        return
    try:
        pipe = get_redis().pipeline(transaction=False)
        for lane in lanes:
            pipe.set(_flag(lane), 1, nx=True, ex=FLAG_TTL_SECONDS)
        fresh = pipe.execute()
    except Exception:
        log.warning("wake flag unavailable; sending wake-ups unconditionally", exc_info=True)
        fresh = [True] * len(lanes)
    for lane, is_fresh in zip(lanes, fresh, strict=True):
        if is_fresh or force:
            app.send_task(DISPATCH_TASK, args=[lane], queue=lane)


def wake_on_commit(lanes: Iterable[str]) -> None:
    lanes = sorted(set(lanes))
    if lanes:
        transaction.on_commit(lambda: wake_now(lanes))


def clear_flag(lane: str) -> None:
    get_redis().delete(_flag(lane))


SWEEP_TASK = "delivery.sweep"
# Scheduled sends due sooner than this get a delayed sweep of their own; later ones are
# released by beat's sweeper, which runs every few seconds.
SCHEDULE_HORIZON_SECONDS = 60.0


def release_at_on_commit(delay_seconds: float) -> None:
    """Ask for a sweep when a scheduled send comes due, so it leaves on time without beat."""
    if delay_seconds > SCHEDULE_HORIZON_SECONDS:
        return

    def send() -> None:
        from config.celery import app

        app.send_task(SWEEP_TASK, countdown=max(delay_seconds, 0.0) + 0.05)

    transaction.on_commit(send)
