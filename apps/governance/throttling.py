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


class ApiKeyRateThrottle(BaseThrottle):
    """Fixed one-minute windows with an atomic counter: one round trip per request."""

    def allow_request(self, request: Request, view: Any) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey):
            return True
        limit = key.rate_limit_per_minute or settings.TIDINGS_API_KEY_RATE_PER_MINUTE
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        counter = f"throttle:{key.project_id}:{key.pk}:{window}"
        if cache.add(counter, 1, WINDOW_SECONDS * 2):
            count = 1
        else:
            try:
                count = cache.incr(counter)
            except ValueError:  # expired between add and incr
                cache.add(counter, 1, WINDOW_SECONDS * 2)
                count = 1
        self._wait = (window + 1) * WINDOW_SECONDS - now
        return count <= limit

    def wait(self) -> float | None:
        return getattr(self, "_wait", None)
