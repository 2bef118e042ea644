"""Without REDIS_URL the token buckets, dry-run accepted keys and account counters live in a
SQLite file of their own (apps.delivery.localstate) and behave as the Redis scripts do."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from apps.delivery import ratelimit
from apps.delivery.channels.dryrun import _accept_local, _keys, dryrun_reset, dryrun_sent_counts


@pytest.fixture
def no_redis(tmp_path: Path):
    with override_settings(REDIS_URL="", DATA_DIR=tmp_path):
        yield tmp_path


def _buckets(rate: float, burst: float) -> ratelimit.Buckets:
    return ratelimit.Buckets(
        keys=(f"{ratelimit.PREFIX}p1:email:c1", f"{ratelimit.PREFIX}acct:a"),
        rates=(rate, 0.0),
        bursts=(burst, 0.0),
        account="a",
    )


def test_local_bucket_grants_the_burst_then_defers_the_rest(no_redis: Path) -> None:
    granted, wait, rate = ratelimit.reserve(_buckets(2.0, 5.0), 8)
    assert (granted, rate) == (5, 2.0)
    assert wait == pytest.approx(1.5, abs=0.05)  # 3 more tokens at 2/s
    granted_again, _, _ = ratelimit.reserve(_buckets(2.0, 5.0), 8)
    assert granted_again == 0
    assert (no_redis / "delivery-state.sqlite3").exists()


def test_local_bucket_without_a_rate_is_unlimited_and_set_rate_steers_it(no_redis: Path) -> None:
    assert ratelimit.reserve(_buckets(0.0, 0.0), 1000)[0] == 1000
    ratelimit.account_set_rate("a", 1.0)
    assert ratelimit.account_rate("a") == 1.0
    assert ratelimit.reserve(_buckets(0.0, 0.0), 1000)[0] == 1  # the account bucket: burst = rate


def test_local_account_counters_add_up_within_the_window(no_redis: Path) -> None:
    ratelimit.account_record("a", 3, 1)
    ratelimit.account_record("a", 2, 0)
    assert ratelimit.account_counters("a") == {"ok": 5, "throttled": 1}


def test_local_dryrun_record_answers_a_resent_key_with_the_first_reference(no_redis: Path) -> None:
    keys = _keys(41)
    first = _accept_local(keys, [60, "1", "k1", "ref-1", "k2", "ref-2"])
    again = _accept_local(keys, [60, "1", "k1", "ref-3"])
    assert first == ["", ""]
    assert again == [b"ref-1"]
    assert dryrun_sent_counts(41) == {"k1": 1, "k2": 1}
    dryrun_reset(41)
    assert dryrun_sent_counts(41) == {}
