"""Waking the router after a commit, at most one pending wake-up per project and lane.

Under load hundreds of notifications commit per second; one Celery message each would
cost the API more than the INSERTs do. A short-lived flag in Redis (SET NX) lets only the
first commit send a message; the relay task clears the flag *before* it claims, so a row
committed after the claim began always sends a fresh wake-up. If a message is lost the
flag expires and the beat sweeper relays the rows anyway: the outbox is the record.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from django.conf import settings

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


class WakeCoalescer:
    """At most one wake-up write per project and lane per ``window`` seconds in a process.

    The API process commits hundreds of notifications a second, each followed by a SET NX
    round trip that almost always finds the flag already set. Here the first commit of a
    window writes at once and any later commit of the same window is covered by one write
    at the window's end, made by a background thread: every commit is still followed by a
    wake-up write, so the relay's guarantee (a row committed after its claim began always
    wakes it again) holds, at most ``window`` later. A write still pending when the process
    dies is the beat sweeper's to relay, as for a lost message.
    """

    def __init__(self, window: float) -> None:
        self.window = window
        self._lock = threading.Condition()
        self._last: dict[tuple[int, str], float] = {}
        self._due: dict[tuple[int, str], float] = {}
        self._thread: threading.Thread | None = None
        self._pid = 0

    def wake(self, project_id: int, lane: str) -> None:
        key, now = (project_id, lane), time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.window:
                if key not in self._due:
                    self._due[key] = last + self.window
                    self._ensure_thread()
                    self._lock.notify()
                return
            self._last[key] = now
            if len(self._last) > 10_000:  # idle keys of past windows
                self._last = {k: t for k, t in self._last.items() if now - t < self.window or k in self._due}
        relay_wake(project_id=project_id, lane=lane)

    def _ensure_thread(self) -> None:
        if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._run, name="relay-wake-coalescer", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._due:
                    self._lock.wait()
                now = time.monotonic()
                ready = [key for key, due in self._due.items() if due <= now]
                if not ready:
                    self._lock.wait(min(self._due.values()) - now)
                    continue
                for key in ready:
                    del self._due[key]
                    self._last[key] = now
            for project_id, lane in ready:
                try:
                    relay_wake(project_id=project_id, lane=lane)
                except Exception:  # the outbox row is safe: the sweeper relays it
                    log.warning("deferred relay wake-up failed", exc_info=True)


_coalescer: WakeCoalescer | None = None
_coalescer_lock = threading.Lock()


def relay_wake_after_commit(*, project_id: int, lane: str) -> None:
    """The publish path's wake-up: ``relay_wake``, coalesced per process when
    ``TIDINGS_RELAY_WAKE_COALESCE_MS`` is set (the API process; 0, the default: every commit)."""
    global _coalescer
    window = getattr(settings, "TIDINGS_RELAY_WAKE_COALESCE_MS", 0) / 1000
    if window <= 0:
        relay_wake(project_id=project_id, lane=lane)
        return
    if _coalescer is None or _coalescer.window != window:
        with _coalescer_lock:
            if _coalescer is None or _coalescer.window != window:
                _coalescer = WakeCoalescer(window)
    _coalescer.wake(project_id, lane)
