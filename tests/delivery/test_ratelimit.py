"""Token buckets and per-account send counters, in Redis, shared by every worker."""

from __future__ import annotations

import pytest

from apps.delivery import ratelimit
from apps.delivery.redis_client import get_redis
from tests.delivery.conftest import redis_clear


@pytest.fixture(autouse=True)
def _redis():
    redis_clear()
    yield
    redis_clear()


def _buckets(rate: float, burst: float, account: str = "acct-under-test") -> ratelimit.Buckets:
    return ratelimit.Buckets(
        keys=(f"{ratelimit.PREFIX}p1:email:c1", f"{ratelimit.PREFIX}acct:{account}"),
        rates=(rate, 0.0),
        bursts=(burst, 0.0),
        account=account,
    )


def test_bucket_grants_the_burst_then_defers_the_rest() -> None:
    granted, wait, rate = ratelimit.reserve(_buckets(2.0, 5.0), 8)
    assert (granted, rate) == (5, 2.0)
    assert wait == pytest.approx(1.5, abs=0.05)  # 3 more tokens at 2/s
    granted_again, _, _ = ratelimit.reserve(_buckets(2.0, 5.0), 8)
    assert granted_again == 0


def test_bucket_without_a_rate_is_unlimited_and_set_rate_steers_the_account() -> None:
    assert ratelimit.reserve(_buckets(0.0, 0.0), 1000)[0] == 1000
    ratelimit.account_set_rate("acct-under-test", 1.0)
    assert ratelimit.account_rate("acct-under-test") == 1.0
    assert ratelimit.reserve(_buckets(0.0, 0.0), 1000)[0] == 1  # the account bucket: burst = rate


def test_account_counters_add_up_within_the_window() -> None:
    ratelimit.account_record("acct-under-test", 3, 1)
    ratelimit.account_record("acct-under-test", 2, 0)
    ratelimit.account_record("acct-under-test", 0, 0)  # nothing to count: no write
    assert ratelimit.account_counters("acct-under-test") == {"ok": 5, "throttled": 1}
    assert ratelimit.account_counters("another-account") == {"ok": 0, "throttled": 0}


def test_an_origin_bucket_slows_only_the_rows_that_take_it_and_is_gone_once_deleted() -> None:
    own = f"{ratelimit.PREFIX}p1:campaign:7"
    ratelimit.bucket_configure(own, 2.0, 2.0, ttl_seconds=60)
    shared = _buckets(0.0, 0.0)
    assert ratelimit.reserve(shared.plus(own), 100)[:2] == (2, 49.0)  # 98 more at 2/s
    assert ratelimit.reserve(shared, 100)[0] == 100
    assert ratelimit.account_rate("acct-under-test") is None
    ratelimit.bucket_delete(own)
    assert ratelimit.reserve(shared.plus(own), 100)[0] == 100
    assert not get_redis().exists(own)  # a reservation does not bring it back
