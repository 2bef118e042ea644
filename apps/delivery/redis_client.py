"""One Redis connection pool per process for rate limits, wake flags and dry-run records."""

from __future__ import annotations

from functools import lru_cache

import redis
from django.conf import settings


@lru_cache(maxsize=1)
def get_redis() -> redis.Redis:
    # Celery prefork children inherit nothing useful from the parent's pool: the cache is
    # per process because lru_cache state is copied before any connection is opened.
    return redis.Redis.from_url(settings.REDIS_URL or "redis://127.0.0.1:6379/0")
