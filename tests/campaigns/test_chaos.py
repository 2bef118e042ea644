"""Crashes and interruptions mid-campaign: nobody is sent twice, nobody is lost."""

from __future__ import annotations

import time
from typing import Any

import pytest

from apps.campaigns import lifecycle
from apps.campaigns.models import CampaignSettings, CampaignState
from apps.delivery.channels.dryrun import dryrun_sent_counts
from tests.campaigns.conftest import add_subscribers
from tests.campaigns.helpers import assert_counters_equal_rows, beat_once, rows, run_until, state_of
from tests.campaigns.test_sending import dry_connector

pytestmark = pytest.mark.django_db(transaction=True)

RECIPIENTS = 3000


def sent_so_far(project: Any) -> int:
    return len(dryrun_sent_counts(project.pk))


def assert_exactly_once(project: Any, campaign: Any) -> None:
    assert rows(campaign).count() == RECIPIENTS
    assert set(rows(campaign).values_list("state", flat=True)) <= {"sent", "delivered"}
    sent = dryrun_sent_counts(project.pk)
    assert len(sent) == RECIPIENTS, "a recipient was lost"
    assert max(sent.values()) == 1, "a recipient got two accepted sends"
    assert_counters_equal_rows(campaign)


def test_sigkill_of_a_worker_mid_campaign_loses_nobody_and_sends_nobody_twice(
    project: Any, make_campaign: Any, start_worker: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("TIDINGS_DISPATCH_CLAIM_TTL_SECONDS", "3")
    CampaignSettings.objects.create(project=project, initial_rate=400, max_rate=400)
    connector = dry_connector(project, latency_ms=150)
    add_subscribers(project, RECIPIENTS)
    worker = start_worker()
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector))
    run_until(lambda: sent_so_far(project) >= 600, timeout=90, message=lambda: worker.log()[-2000:])
    worker.kill()
    assert state_of(campaign) == CampaignState.RUNNING
    assert sent_so_far(project) < RECIPIENTS
    start_worker()
    run_until(lambda: state_of(campaign) == CampaignState.COMPLETED, timeout=150)
    assert_exactly_once(project, campaign)


def test_pause_and_resume_mid_run_sends_each_recipient_once(
    project: Any, make_campaign: Any, celery_worker: Any
) -> None:
    CampaignSettings.objects.create(project=project, initial_rate=400, max_rate=400)
    connector = dry_connector(project, latency_ms=50)
    add_subscribers(project, RECIPIENTS)
    campaign = lifecycle.campaign_start(campaign=make_campaign(connector=connector))
    run_until(lambda: sent_so_far(project) >= 600, timeout=90)
    lifecycle.campaign_pause(campaign=campaign, reason="copy check")
    time.sleep(2)  # batches already claimed finish
    beat_once()
    frozen = sent_so_far(project)
    for _ in range(4):
        beat_once()
        time.sleep(1)
    assert sent_so_far(project) == frozen, "a paused campaign kept sending"
    assert frozen < RECIPIENTS
    lifecycle.campaign_resume(campaign=campaign)
    run_until(lambda: state_of(campaign) == CampaignState.COMPLETED, timeout=120)
    assert_exactly_once(project, campaign)
