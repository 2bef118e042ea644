"""The campaigns side of the provider-account token bucket (owned by apps.delivery.ratelimit).

AIMD steers the account bucket's rate and reads the dispatcher's per-account counters.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

try:
    from apps.delivery import ratelimit
except ImportError:  # an older delivery app without the shared rate limiter
    ratelimit = None  # type: ignore[assignment]


def account_key_for(connector: Any) -> str:
    """Same rule as the dispatcher: the connector's ``account`` setting, else the connector."""
    if connector is None:
        return "connector:None"
    return str((connector.settings or {}).get("account") or f"connector:{connector.pk}")


def bucket_set_rate(account: str, rate: float) -> None:
    # A burst of about a fifth of a second keeps a freshly raised rate from arriving as a herd.
    if ratelimit is None:
        return
    ratelimit.bucket_set_rate(f"acct:{account}", rate, burst=max(rate / 5, 50.0))


def window_seconds() -> int:
    return int(getattr(settings, "TIDINGS_CAMPAIGN_AIMD_WINDOW_SECONDS", 2))


def account_counters(account: str) -> dict[str, float]:
    """Accepted and throttled answers over the last few seconds (the control interval)."""
    seconds = window_seconds()
    if ratelimit is None:
        return {"ok": 0, "throttled": 0, "seconds": seconds}
    counts = ratelimit.account_counters(account, window_seconds=seconds)
    return {"ok": counts.get("ok", 0), "throttled": counts.get("throttled", 0), "seconds": seconds}
