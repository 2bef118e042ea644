"""A campaign's rate limit governs only that campaign: transactional mail on the same
provider account keeps the account's own rate during and after it, and campaigns with
different limits do not slow each other. Real worker, Postgres, Redis, dry-run adapter."""

from __future__ import annotations

import time
from typing import Any

import pytest

from apps.campaigns import lifecycle
from apps.campaigns.models import CampaignState, CampaignStats
from apps.campaigns.rate import account_key_for, legacy_account_overrides_clear
from apps.delivery import ratelimit
from apps.delivery.models import Delivery
from apps.delivery.redis_client import get_redis
from tests.campaigns.conftest import add_subscribers
from tests.campaigns.helpers import run_until, state_of
from tests.campaigns.test_sending import dry_connector
from tests.delivery.conftest import redis_clear

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]

BURST = 100
# What a hundred emails take at the account's own (unlimited) rate on a busy machine; at
# a campaign's few messages a second they would take the better part of a minute.
FAST_SECONDS = 12.0


def _campaign_bucket(campaign: Any) -> dict[bytes, bytes]:
    return get_redis().hgetall(f"{ratelimit.PREFIX}p{campaign.project_id}:campaign:{campaign.pk}")


def _sent(campaign: Any) -> int:
    return CampaignStats.objects.get(campaign=campaign).sent


def _burst_seconds(api: Any, round_name: str, worker: Any) -> float:
    """POST a hundred raw transactional emails; seconds until every one was sent."""
    messages = [
        {"to": {"email": f"{round_name}{i}@example.com"}, "subject": "Your receipt", "text": "Thanks for your order."}
        for i in range(BURST)
    ]
    began = time.monotonic()
    response = api.post("/api/v1/messages/email/batch", {"messages": messages, "priority": "high"}, format="json")
    assert response.status_code == 202, response.content
    ids = [m["deliveries"][0] for m in response.json()["messages"]]

    def all_sent() -> bool:
        return Delivery.objects.filter(pk__in=ids, state__in=["sent", "delivered"]).count() == BURST

    run_until(
        all_sent,
        timeout=FAST_SECONDS,
        interval=0.2,
        message=lambda: (
            f"{round_name}: only {Delivery.objects.filter(pk__in=ids, state__in=['sent', 'delivered']).count()}"
            f" of {BURST} transactional emails sent after {time.monotonic() - began:.1f}s\n{worker.log()[-2000:]}"
        ),
    )
    return time.monotonic() - began


def test_transactional_mail_keeps_the_account_rate_during_and_after_a_slow_campaign(
    project: Any, make_campaign: Any, secret_client: Any, celery_worker: Any
) -> None:
    connector = dry_connector(project)
    account = account_key_for(connector)
    add_subscribers(project, 400)
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector, max_rate=2))
    run_until(lambda: _sent(campaign) > 0, timeout=60, message=lambda: celery_worker.log()[-3000:])

    _burst_seconds(secret_client, "during", celery_worker)
    assert _sent(campaign) < 100, "the campaign outran its own ceiling of 2/s"
    assert float(_campaign_bucket(campaign)[b"rate"]) <= 2
    assert ratelimit.account_rate(account) is None  # the account bucket keeps its configured rate

    lifecycle.campaign_pause(campaign=campaign)
    assert _campaign_bucket(campaign) == {}
    _burst_seconds(secret_client, "paused", celery_worker)
    assert ratelimit.account_rate(account) is None

    lifecycle.campaign_resume(campaign=campaign)
    assert float(_campaign_bucket(campaign)[b"rate"]) <= 2
    lifecycle.campaign_cancel(campaign=campaign)
    assert _campaign_bucket(campaign) == {}
    _burst_seconds(secret_client, "cancelled", celery_worker)
    assert ratelimit.account_rate(account) is None


def test_transactional_mail_is_fast_again_once_a_slow_campaign_completes(
    project: Any, make_campaign: Any, secret_client: Any, celery_worker: Any
) -> None:
    connector = dry_connector(project)
    account = account_key_for(connector)
    _burst_seconds(secret_client, "before", celery_worker)
    add_subscribers(project, 10)
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector, max_rate=5))
    run_until(
        lambda: state_of(campaign) == CampaignState.COMPLETED, timeout=60, message=lambda: celery_worker.log()[-3000:]
    )
    assert _sent(campaign) == 10
    assert _campaign_bucket(campaign) == {}
    assert ratelimit.account_rate(account) is None
    _burst_seconds(secret_client, "after", celery_worker)


def test_two_campaigns_of_one_project_keep_their_own_limits(
    project: Any, make_campaign: Any, celery_worker: Any
) -> None:
    connector = dry_connector(project)
    add_subscribers(project, 300)
    slow = lifecycle.campaign_start(campaign=make_campaign(name="Slow", connector=connector, max_rate=2))
    fast = lifecycle.campaign_start(campaign=make_campaign(name="Fast", connector=connector, max_rate=1000))
    run_until(
        lambda: state_of(fast) == CampaignState.COMPLETED,
        timeout=30,
        message=lambda: f"the fast campaign was held back: sent {_sent(fast)} of 300, slow sent {_sent(slow)}",
    )
    assert _sent(fast) == 300
    assert _sent(slow) < 100, "the slow campaign borrowed the fast one's ceiling"
    assert float(_campaign_bucket(slow)[b"rate"]) <= 2
    lifecycle.campaign_cancel(campaign=slow)


def test_an_account_rate_left_by_the_former_account_wide_aimd_is_given_back() -> None:
    redis_clear()
    redis = get_redis()
    redis.hset("tidings:campaigns:aimd:connector:41", mapping={"target": 5.0, "current": 4.0})
    ratelimit.bucket_set_rate("acct:connector:41", 5.0, burst=50.0)
    redis.hset(f"{ratelimit.PREFIX}acct:connector:41", mapping={"tokens": 3.0, "ts": 1.0})
    ratelimit.account_set_rate("connector:42", 300.0)  # set by hand, not by a campaign

    assert legacy_account_overrides_clear() == 1
    assert ratelimit.account_rate("connector:41") is None
    assert redis.hget(f"{ratelimit.PREFIX}acct:connector:41", "burst") is None
    assert not redis.exists("tidings:campaigns:aimd:connector:41")
    assert ratelimit.account_rate("connector:42") == 300.0
    assert legacy_account_overrides_clear() == 0
