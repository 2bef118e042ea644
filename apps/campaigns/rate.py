"""The campaigns side of the token buckets (owned by apps.delivery.ratelimit).

Each running campaign has a bucket of its own, ``tidings:rl:p<project>:campaign:<id>``, at
its AIMD target (never above its ceiling). The dispatcher takes a campaign's rows from it
in addition to the connector's and the provider account's buckets, so a campaign's limit
slows only that campaign: the account bucket keeps the rate its connector configures,
for transactional mail and for every other campaign. The bucket exists while the campaign
runs; pausing, cancelling or completing deletes it.

AIMD still reads the dispatcher's per-account counters: a throttling answer says the
account is saturated, whichever message drew it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

try:
    from apps.delivery import ratelimit
except ImportError:  # an older delivery app without the shared rate limiter
    ratelimit = None  # type: ignore[assignment]

# Long enough to outlive any pause in the control loop (it rewrites the bucket every
# tick); short enough that a bucket the loop wrote just after its campaign stopped is
# soon gone. A reservation keeps a bucket in use alive regardless.
BUCKET_TTL_SECONDS = 120

# Per-account AIMD state older Tidings kept, and the override of the account bucket's
# rate it wrote alongside: see ``legacy_account_overrides_clear``.
LEGACY_AIMD_PATTERN = "tidings:campaigns:aimd:*"


def account_key_for(connector: Any) -> str:
    """Same rule as the dispatcher: the connector's ``account`` setting, else the connector."""
    if connector is None:
        return "connector:None"
    return str((connector.settings or {}).get("account") or f"connector:{connector.pk}")


def campaign_bucket_key(project_id: int, campaign_id: int) -> str:
    prefix = ratelimit.PREFIX if ratelimit is not None else "tidings:rl:"
    return f"{prefix}p{project_id}:campaign:{campaign_id}"


def campaign_bucket_burst(rate: float) -> float:
    # About a fifth of a second keeps a freshly raised rate from arriving as a herd; a slow
    # campaign's burst is at most a second of its rate, so its ceiling holds from the start.
    return max(rate / 5, min(rate, 50.0))


def campaign_bucket_set(project_id: int, campaign_id: int, rate: float) -> None:
    if ratelimit is None:
        return
    ratelimit.bucket_configure(
        campaign_bucket_key(project_id, campaign_id),
        rate,
        campaign_bucket_burst(rate),
        ttl_seconds=BUCKET_TTL_SECONDS,
    )


def campaign_bucket_clear(project_id: int, campaign_id: int) -> None:
    if ratelimit is None:
        return
    ratelimit.bucket_delete(campaign_bucket_key(project_id, campaign_id))


def campaign_rate_bucket(row: Any) -> str | None:
    """Dispatcher hook: the bucket a campaign's claimed row takes its token from."""
    origin_id = str(row.origin_id)
    return campaign_bucket_key(row.project_id, int(origin_id)) if origin_id.isdigit() else None


def window_seconds() -> int:
    return int(getattr(settings, "TIDINGS_CAMPAIGN_AIMD_WINDOW_SECONDS", 2))


def account_counters(account: str) -> dict[str, float]:
    """Accepted and throttled answers over the last few seconds (the control interval)."""
    seconds = window_seconds()
    if ratelimit is None:
        return {"ok": 0, "throttled": 0, "seconds": seconds}
    counts = ratelimit.account_counters(account, window_seconds=seconds)
    return {"ok": counts.get("ok", 0), "throttled": counts.get("throttled", 0), "seconds": seconds}


def legacy_account_overrides_clear() -> int:
    """Give provider accounts back their configured rate where older Tidings steered it.

    Older releases ran AIMD on the account bucket itself, writing a ``rate`` that outlived
    the campaign: every reservation renews the bucket, so under steady transactional
    traffic it never expired. Only accounts with that release's AIMD state are touched.
    Returns how many were cleared.
    """
    if ratelimit is None:
        return 0
    from apps.delivery.redis_client import get_redis

    redis = get_redis()
    stem = LEGACY_AIMD_PATTERN.rstrip("*")
    cleared = 0
    for key in redis.scan_iter(LEGACY_AIMD_PATTERN, count=1000):
        account = key.decode()[len(stem) :]
        pipe = redis.pipeline(transaction=True)
        pipe.hdel(f"{ratelimit.PREFIX}acct:{account}", "rate", "burst")
        pipe.delete(key)
        pipe.execute()
        cleared += 1
    return cleared
