"""The campaigns side of the provider-account token bucket (owned by apps.delivery.ratelimit).

AIMD steers the bucket's rate and reads the dispatcher's per-account counters. Until the
delivery rate limiter exposes these, the same Redis keys are read and written here.
"""

from __future__ import annotations

import time
from typing import Any

from apps.delivery.redis_client import get_redis

try:  # pragma: no cover - depends on which delivery version is installed
    from apps.delivery import ratelimit as _ratelimit
except ImportError:  # pragma: no cover
    _ratelimit = None  # type: ignore[assignment]


def account_key_for(connector: Any) -> str:
    if _ratelimit is not None and hasattr(_ratelimit, "account_key_for"):
        return str(_ratelimit.account_key_for(connector))
    if connector is None:
        return "default"
    return str((connector.settings or {}).get("account") or f"connector:{connector.pk}")


def bucket_set_rate(account: str, rate: float) -> None:
    if _ratelimit is not None and hasattr(_ratelimit, "bucket_set_rate"):
        _ratelimit.bucket_set_rate(account, rate)
        return
    get_redis().hset(f"tidings:ratelimit:account:{account}", "rate", rate)


def account_counters(account: str) -> dict[str, float]:
    """Accepted and throttled answers since the previous call, and the seconds covered."""
    if _ratelimit is not None and hasattr(_ratelimit, "account_counters"):
        return dict(_ratelimit.account_counters(account))
    redis = get_redis()
    key = f"tidings:ratelimit:counters:{account}"
    pipe = redis.pipeline()
    pipe.hgetall(key)
    pipe.delete(key)
    raw, _ = pipe.execute()
    now = time.time()
    last = float(redis.getset(f"{key}:last", now) or now)
    values = {k.decode(): float(v) for k, v in raw.items()}
    return {"ok": values.get("ok", 0), "throttled": values.get("throttled", 0), "seconds": max(0.0, now - last)}
