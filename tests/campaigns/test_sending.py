"""Campaigns through a real Celery worker, Postgres, Redis and the dry-run email adapter."""

from __future__ import annotations

from typing import Any

import pytest

from apps.campaigns import lifecycle
from apps.campaigns.models import CampaignEvent, CampaignSample, CampaignSettings, CampaignState, CampaignStats
from apps.delivery.channels.dryrun import dryrun_reset, dryrun_sent_counts
from apps.delivery.models import Connector
from tests.campaigns.conftest import add_subscribers, make_connector
from tests.campaigns.helpers import assert_counters_equal_rows, rows, run_until, state_of

pytestmark = pytest.mark.django_db(transaction=True)


def dry_connector(project: Any, **knobs: Any) -> Connector:
    Connector.objects.filter(project=project).update(is_default=False)
    connector = make_connector(project, record_sends=True, receipt_delay_s=0.3, **knobs)
    dryrun_reset(project.pk)
    return connector


def test_every_recipient_gets_exactly_one_personalised_email_with_one_click_headers(
    project: Any, make_campaign: Any
) -> None:
    """In-process dispatch, so the built provider payload can be inspected."""
    from apps.campaigns.fanout import campaign_chunk_fan_out
    from apps.delivery.dispatch.prepare import sender_for
    from apps.delivery.dispatch.runner import dispatch_batch

    connector = dry_connector(project)
    add_subscribers(project, 3)
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector))
    for chunk in campaign.chunks.all():
        campaign_chunk_fan_out(project_id=project.pk, campaign_id=campaign.pk, chunk_id=chunk.pk)
    assert dispatch_batch("bulk") == 3
    payloads = sender_for(project.pk, "email", connector.pk).adapter.last_payloads
    assert len(payloads) == 3
    text = repr(payloads)
    assert "Hello Ann0" in text and "Hello Ann2" in text
    assert "List-Unsubscribe=One-Click" in text and "/u/" in text
    assert set(rows(campaign).values_list("state", flat=True)) == {"sent"}


def test_campaign_runs_to_completion_once_per_recipient(project: Any, make_campaign: Any, celery_worker: Any) -> None:
    connector = dry_connector(project)
    add_subscribers(project, 600)
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector))
    run_until(lambda: state_of(campaign) == CampaignState.COMPLETED, timeout=90, message=celery_worker.log()[-3000:])
    assert rows(campaign).count() == 600
    assert set(rows(campaign).values_list("state", flat=True)) <= {"sent", "delivered"}
    sent = dryrun_sent_counts(project.pk)
    assert len(sent) == 600 and set(sent.values()) == {1}
    run_until(lambda: CampaignStats.objects.get(campaign=campaign).delivered == 600, timeout=30)
    assert_counters_equal_rows(campaign)


def test_eight_percent_bounces_trip_the_breaker_and_pause(project: Any, make_campaign: Any, celery_worker: Any) -> None:
    # A slow rate and a long list give the breaker a wide margin on a busy machine: it must
    # trip long before the list runs out.
    CampaignSettings.objects.create(project=project, min_sample=150, initial_rate=100, max_rate=100)
    connector = dry_connector(project, bounce_rate=0.08)
    add_subscribers(project, 6000)
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector))
    run_until(
        lambda: state_of(campaign) == CampaignState.PAUSED,
        timeout=120,
        message=lambda: (
            f"the breaker never tripped: {state_of(campaign)} "
            f"{CampaignStats.objects.filter(campaign=campaign).values().first()} "
            f"samples={list(CampaignSample.objects.filter(campaign=campaign).values_list('sent', 'bounced'))}"
            f" events={list(CampaignEvent.objects.filter(campaign=campaign).values_list('message', flat=True))}"
        ),
    )
    campaign.refresh_from_db()
    assert campaign.pause_reason.startswith("Reputation breaker: Bounce rate")
    assert CampaignEvent.objects.filter(campaign=campaign, kind="breaker").exists()
    assert rows(campaign).filter(state="scheduled").exists()  # the rest is held, not sent
    stats = CampaignStats.objects.get(campaign=campaign)
    assert stats.sent < 6000


def test_throttling_pulls_the_target_rate_down_and_it_recovers(
    project: Any, make_campaign: Any, celery_worker: Any
) -> None:
    CampaignSettings.objects.create(project=project, initial_rate=400, min_rate=40, max_rate=2000, increase_step=100)
    connector = dry_connector(project, throttle_rate=0.2)
    add_subscribers(project, 8000)
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector))

    def target() -> float:
        return CampaignStats.objects.get(campaign=campaign).target_rate

    run_until(
        lambda: target() <= 100,
        timeout=60,
        message=lambda: (
            "throttling never pulled the target down: "
            f"{CampaignStats.objects.filter(campaign=campaign).values().first()}"
        ),
    )
    low = target()
    assert CampaignEvent.objects.filter(campaign=campaign, kind="rate", message__startswith="Throttled").exists()
    settings = {**connector.settings, "throttle_rate": 0.0}
    Connector.objects.filter(pk=connector.pk).update(settings=settings)
    # The worker caches a resolved connector for a few seconds; then sends come back clean.
    run_until(lambda: target() >= low + 500, timeout=60, message=f"the target never recovered from {low}")
    lifecycle.campaign_cancel(campaign=campaign)
