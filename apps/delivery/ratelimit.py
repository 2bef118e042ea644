"""Token buckets in Redis, shared by every worker, reserved a batch at a time.

A send is gated by two buckets: one per project + channel + connector (the project's own
limit) and one per provider account (what the provider grants the account, from the
connector's settings). An origin may add a bucket of its own for its rows (a campaign's
ceiling and AIMD target, see ``apps.delivery.origins``), configured by that origin through
``bucket_configure`` and taken in addition to the other two, so it can only slow its own
rows. One Lua call reserves as many tokens as all the buckets allow for a whole batch: one
Redis round trip per message would cap a process at ~9k/s. A bucket with no rate is
unlimited.

The dispatcher also counts sends per account per second (``account_record``), which the
AIMD controller reads with ``account_counters``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apps.delivery.channels.base import ConnectorConfig
from apps.delivery.redis_client import get_redis

PREFIX = "tidings:rl:"
COUNTER_TTL_SECONDS = 300

# KEYS: buckets. ARGV[1]: tokens wanted; then per bucket: default rate, default burst.
# A bucket's own 'rate' field (bucket_set_rate) wins over the default. Returns
# {granted, ms until the remainder could be served, slowest rate in tokens per 1000 s}.
_RESERVE_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local want = tonumber(ARGV[1])
local grant = want
local state = {}
local wait = 0
local slowest = 0
for i, key in ipairs(KEYS) do
    local fields = redis.call('HMGET', key, 'rate', 'burst', 'tokens', 'ts')
    local rate = tonumber(fields[1]) or tonumber(ARGV[2 * i])
    if rate and rate > 0 then
        local burst = tonumber(fields[2]) or tonumber(ARGV[2 * i + 1])
        if not burst or burst <= 0 then burst = math.max(rate, 1) end
        local tokens = tonumber(fields[3]) or burst
        local ts = tonumber(fields[4]) or now
        tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
        state[i] = {tokens, rate}
        if slowest == 0 or rate < slowest then slowest = rate end
        if math.floor(tokens) < grant then grant = math.floor(tokens) end
    end
end
if grant < 0 then grant = 0 end
for i, key in ipairs(KEYS) do
    if state[i] then
        local left = state[i][1] - grant
        redis.call('HSET', key, 'tokens', tostring(left), 'ts', tostring(now))
        redis.call('EXPIRE', key, 3600)
        if grant < want then
            local need = (want - grant) - left
            if need > 0 then wait = math.max(wait, math.ceil(need / state[i][2] * 1000)) end
        end
    end
end
return {grant, wait, math.floor(slowest * 1000)}
"""


@dataclass(frozen=True)
class Buckets:
    keys: tuple[str, ...]
    rates: tuple[float, ...]
    bursts: tuple[float, ...]
    account: str

    def plus(self, key: str) -> Buckets:
        """These buckets and an origin's own, whose rate and burst live in its Redis hash."""
        return Buckets(
            keys=(*self.keys, key), rates=(*self.rates, 0.0), bursts=(*self.bursts, 0.0), account=self.account
        )


def account_key_for(config: ConnectorConfig) -> str:
    """The provider account a connector sends through (several connectors may share one)."""
    return str(config.settings.get("account") or f"connector:{config.connector_id}")


def buckets_for(config: ConnectorConfig) -> Buckets:
    settings: Mapping[str, Any] = config.settings
    account = account_key_for(config)
    return Buckets(
        keys=(
            f"{PREFIX}p{config.project_id}:{config.channel}:c{config.connector_id}",
            f"{PREFIX}acct:{account}",
        ),
        rates=(float(settings.get("rate_per_second") or 0), float(settings.get("account_rate_per_second") or 0)),
        bursts=(float(settings.get("burst") or 0), float(settings.get("account_burst") or 0)),
        account=account,
    )


def reserve(buckets: Buckets, wanted: int) -> tuple[int, float, float]:
    """Take up to ``wanted`` tokens from every bucket at once.

    Returns (granted, seconds until the rest could go, the slowest bucket's rate or 0).
    """
    if wanted <= 0:
        return 0, 0.0, 0.0
    argv: list[Any] = [wanted]
    for rate, burst in zip(buckets.rates, buckets.bursts, strict=True):
        argv += [rate, burst]
    granted, wait_ms, rate_milli = get_redis().eval(_RESERVE_LUA, len(buckets.keys), *buckets.keys, *argv)
    return int(granted), int(wait_ms) / 1000, int(rate_milli) / 1000


def bucket_set_rate(key: str, rate_per_second: float, burst: float | None = None) -> None:
    """Override a bucket's configured rate (e.g. an operator capping ``acct:<account>``)."""
    name = key if key.startswith(PREFIX) else PREFIX + key
    mapping: dict[str, Any] = {"rate": rate_per_second}
    if burst is not None:
        mapping["burst"] = burst
    get_redis().hset(name, mapping=mapping)


def bucket_configure(key: str, rate_per_second: float, burst: float, *, ttl_seconds: int) -> None:
    """Set an origin's own bucket. It expires ``ttl_seconds`` after this write unless a
    reservation takes from it meanwhile (which keeps it an hour), so a bucket its origin
    stopped using without deleting it (a crash, a race with its control loop) cannot linger."""
    name = key if key.startswith(PREFIX) else PREFIX + key
    pipe = get_redis().pipeline(transaction=True)
    pipe.hset(name, mapping={"rate": rate_per_second, "burst": burst})
    pipe.expire(name, ttl_seconds)
    pipe.execute()


def bucket_delete(key: str) -> None:
    get_redis().delete(key if key.startswith(PREFIX) else PREFIX + key)


def bucket_rate(key: str) -> float | None:
    name = key if key.startswith(PREFIX) else PREFIX + key
    value = get_redis().hget(name, "rate")
    return float(value) if value is not None else None


def account_record(account: str, ok: int, throttled: int) -> None:
    """Count sends of one batch in this second's window (one round trip)."""
    if not ok and not throttled:
        return
    key = f"{PREFIX}count:{account}:{int(time.time())}"
    pipe = get_redis().pipeline(transaction=False)
    if ok:
        pipe.hincrby(key, "ok", ok)
    if throttled:
        pipe.hincrby(key, "throttled", throttled)
    pipe.expire(key, COUNTER_TTL_SECONDS)
    pipe.execute()


def account_counters(account: str, window_seconds: int = 10) -> dict[str, int]:
    """Sends accepted and throttled for ``account`` over the last ``window_seconds``."""
    now = int(time.time())
    pipe = get_redis().pipeline(transaction=False)
    for second in range(now - window_seconds + 1, now + 1):
        pipe.hgetall(f"{PREFIX}count:{account}:{second}")
    totals = {"ok": 0, "throttled": 0}
    for window in pipe.execute():
        for field, value in window.items():
            totals[field.decode()] = totals.get(field.decode(), 0) + int(value)
    return totals


def account_set_rate(account: str, rate_per_second: float) -> None:
    """Steer a provider account's shared bucket (``account`` as from ``account_key_for``)."""
    bucket_set_rate(f"acct:{account}", rate_per_second)


def account_rate(account: str) -> float | None:
    return bucket_rate(f"acct:{account}")
