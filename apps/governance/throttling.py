"""Per-key request budget, counted in the shared cache (Redis in every real deployment)."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from apps.governance.models import ApiKey

WINDOW_SECONDS = 60


_client: Any = None


def _redis_client() -> Any | None:
    # Django's Redis cache builds a new client object on every get_client() call, which
    # costs more CPU than the round trip; one per process (it is thread-safe, and its
    # connection pool notices a fork) shares the cache's pool instead.
    global _client
    if _client is None:
        backend = getattr(cache, "_cache", None)
        get_client = getattr(backend, "get_client", None)
        if get_client is None:
            return None
        _client = get_client("throttle", write=True)
    return _client


def count_request(counter: str) -> int:
    """Count one request in ``counter`` and return the window's total.

    With Redis this is one round trip (INCR and EXPIRE pipelined); other caches, used
    only locally, fall back to add/incr.
    """
    client = _redis_client()
    if client is not None:
        key = cache.make_and_validate_key(counter)
        pipe = client.pipeline(transaction=False)
        pipe.incr(key)
        pipe.expire(key, WINDOW_SECONDS * 2, nx=True)
        count, _ = pipe.execute()
        return int(count)
    if cache.add(counter, 1, WINDOW_SECONDS * 2):
        return 1
    try:
        return cache.incr(counter)
    except ValueError:  # expired between add and incr
        cache.add(counter, 1, WINDOW_SECONDS * 2)
        return 1


class ApiKeyRateThrottle(BaseThrottle):
    """Fixed one-minute windows with an atomic counter per key."""

    def allow_request(self, request: Request, view: Any) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey):
            return True
        limit = key.rate_limit_per_minute or settings.TIDINGS_API_KEY_RATE_PER_MINUTE
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        count = count_request(f"throttle:{key.project_id}:{key.pk}:{window}")
        self._wait = (window + 1) * WINDOW_SECONDS - now
        return count <= limit

    def wait(self) -> float | None:
        return getattr(self, "_wait", None)
