"""The state machine and its refusals, against real Postgres (no worker needed)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from apps.campaigns import ledger, lifecycle
from apps.campaigns.models import Campaign, CampaignChunk, CampaignState, CampaignStats
from apps.campaigns.reconcile import campaign_reconcile
from apps.core.errors import ApplicationError
from apps.delivery.models import Delivery
from apps.subscribers.models import ImportJob
from tests.campaigns.conftest import add_subscribers, make_connector, make_template

pytestmark = pytest.mark.django_db(transaction=True)


def fan_out_inline(campaign: Campaign) -> None:
    """Run the chunk tasks' service in-process (the worker tests run them for real)."""
    from apps.campaigns.fanout import campaign_chunk_fan_out

    for chunk in CampaignChunk.objects.filter(campaign=campaign, done=False):
        campaign_chunk_fan_out(project_id=campaign.project_id, campaign_id=campaign.pk, chunk_id=chunk.pk)


def states(campaign: Campaign) -> dict[str, int]:
    rows = Delivery.objects.filter(origin_kind="campaign", origin_id=str(campaign.pk)).values_list("state", flat=True)
    out: dict[str, int] = {}
    for state in rows:
        out[state] = out.get(state, 0) + 1
    return out


def test_start_fans_out_one_bulk_delivery_per_recipient_in_chunks(
    project: Any, make_campaign: Any, settings: Any
) -> None:
    settings.TIDINGS_CAMPAIGN_CHUNK_SIZE = 7
    add_subscribers(project, 30)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    assert campaign.state == CampaignState.RUNNING
    assert campaign.template_version is not None and campaign.template_version.number == 1
    assert CampaignChunk.objects.filter(campaign=campaign).count() == 5
    fan_out_inline(campaign)
    fan_out_inline(campaign)  # a repeated chunk message inserts nothing new
    rows = Delivery.objects.filter(origin_kind="campaign", origin_id=str(campaign.pk))
    assert rows.count() == 30
    assert set(rows.values_list("lane", flat=True)) == {"bulk"}
    keys = set(rows.values_list("delivery_key", flat=True))
    sub_ids = set(rows.values_list("subscriber_id", flat=True))
    assert keys == {f"campaign:{campaign.pk}:{s}" for s in sub_ids}
    assert CampaignStats.objects.get(campaign=campaign).pending == 30


def test_start_refuses_no_recipients_draft_template_and_running(project: Any, make_campaign: Any) -> None:
    with pytest.raises(ApplicationError) as empty:
        lifecycle.campaign_start(campaign=make_campaign())
    assert empty.value.code == "no_recipients"

    add_subscribers(project, 3)
    draft = make_campaign(template=make_template(project, "draft-one", published=False))
    with pytest.raises(ApplicationError) as draft_error:
        lifecycle.campaign_start(campaign=draft)
    assert draft_error.value.code == "template_draft"
    assert Campaign.objects.get(pk=draft.pk).state == CampaignState.DRAFT

    campaign = lifecycle.campaign_start(campaign=make_campaign())
    with pytest.raises(ApplicationError) as again:
        lifecycle.campaign_start(campaign=campaign)
    assert again.value.code == "campaign_already_running" and again.value.status == 409


def test_connector_of_another_project_is_refused(project: Any, other_project: Any, make_campaign: Any) -> None:
    foreign = make_connector(other_project)
    with pytest.raises(ApplicationError) as error:
        make_campaign(connector=foreign)
    assert error.value.code == "connector_other_project"
    assert not Campaign.objects.filter(project=project).exists()


def test_start_refused_while_an_import_is_running(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 3)
    fields = {f.name for f in ImportJob._meta.get_fields()}
    values: dict[str, Any] = {"project": project, "status": ImportJob.Status.RUNNING}
    if "file_name" in fields:
        values["file_name"] = "people.csv"
    ImportJob.objects.create(**values)
    with pytest.raises(ApplicationError) as error:
        lifecycle.campaign_start(campaign=make_campaign())
    assert error.value.code == "import_running"


def test_pause_holds_waiting_rows_and_resume_releases_only_them(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 20)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    # Five were sent before the pause: they must never be touched again.
    sent_ids = list(
        Delivery.objects.filter(origin_kind="campaign", origin_id=str(campaign.pk))
        .order_by("id")[:5]
        .values_list("id", flat=True)
    )
    Delivery.objects.filter(id__in=sent_ids).update(state="sent", attempts=1)
    lifecycle.campaign_pause(campaign=campaign, reason="checking the copy")
    assert states(campaign) == {"sent": 5, "scheduled": 15}
    assert Delivery.objects.filter(state="scheduled", due_at=ledger.HOLD_UNTIL).count() == 15
    with pytest.raises(ApplicationError):
        lifecycle.campaign_pause(campaign=campaign)
    lifecycle.campaign_resume(campaign=campaign)
    assert states(campaign) == {"sent": 5, "queued": 15}
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.RUNNING


def test_resume_of_a_completed_campaign_is_refused(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 4)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    Delivery.objects.filter(origin_kind="campaign").update(state="sent", attempts=1)
    campaign_reconcile(campaign)
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.COMPLETED
    with pytest.raises(ApplicationError) as error:
        lifecycle.campaign_resume(campaign=campaign)
    assert error.value.code == "campaign_completed"


def test_cancel_keeps_waiting_rows_for_audit(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 6)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    lifecycle.campaign_cancel(campaign=campaign)
    assert states(campaign) == {"cancelled": 6}
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.CANCELLED


def test_cancel_ends_rows_an_in_flight_batch_put_back_within_one_reaper_tick(project: Any, make_campaign: Any) -> None:
    """Rows a rate-gated batch held when the cancel came are re-queued for later by that
    batch; the reaper ends them instead of leaving them pending until they come due."""
    from datetime import timedelta

    from apps.campaigns.reconcile import campaigns_reap
    from apps.delivery.dispatch.claim import claim_batch
    from apps.delivery.dispatch.outcome import RowResult
    from apps.delivery.dispatch.record import record_results

    add_subscribers(project, 6)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    token, rows = claim_batch("bulk", limit=3, ttl_seconds=60)
    assert len(rows) == 3
    lifecycle.campaign_cancel(campaign=campaign)
    assert states(campaign) == {"cancelled": 3, "claimed": 3}
    later = timezone.now() + timedelta(minutes=2)
    record_results(token, [RowResult(r, "queued", reason="rate limited", due_at=later) for r in rows], timezone.now())
    assert states(campaign) == {"cancelled": 3, "queued": 3}

    assert campaigns_reap()["cancelled"] == 3
    assert states(campaign) == {"cancelled": 6}
    stats = CampaignStats.objects.get(campaign=campaign)
    assert (stats.pending, stats.cancelled) == (0, 6)
    assert campaigns_reap()["cancelled"] == 0


def test_retry_moves_dead_letters_only(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 6)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    ids = list(Delivery.objects.filter(origin_kind="campaign").order_by("id").values_list("id", flat=True))
    Delivery.objects.filter(id__in=ids[:2]).update(state="failed", attempts=5, last_error="boom")
    Delivery.objects.filter(id__in=ids[2:]).update(state="sent", attempts=1)
    assert lifecycle.campaign_retry(campaign=campaign) == 2
    assert states(campaign) == {"queued": 2, "sent": 4}
    with pytest.raises(ApplicationError) as error:
        lifecycle.campaign_retry(campaign=campaign)
    assert error.value.code == "no_dead_letters"


def test_reconciler_corrects_drift_and_logs_it(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 5)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    Delivery.objects.filter(origin_kind="campaign").update(state="sent", attempts=2)
    CampaignStats.objects.filter(campaign=campaign).update(sent=3)
    drift = campaign_reconcile(campaign)
    stats = CampaignStats.objects.get(campaign=campaign)
    assert drift["sent"] == (3, 5)
    assert (stats.sent, stats.pending, stats.retried, stats.failed) == (5, 0, 5, 5)
    assert campaign.events.filter(kind="reconcile", message__contains="sent 3 → 5").exists()
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.COMPLETED


def test_scheduled_campaign_starts_when_due(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 3)
    later = timezone.now() + timezone.timedelta(hours=1)
    campaign = lifecycle.campaign_start(campaign=make_campaign(send_at=later))
    assert campaign.state == CampaignState.SCHEDULED
    assert lifecycle.campaign_start_due(now=later + timezone.timedelta(seconds=1)) == 1
    assert Campaign.objects.get(pk=campaign.pk).state == CampaignState.RUNNING
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def test_breaker_paused_campaign_with_nothing_left_completes_keeping_its_note(project: Any, make_campaign: Any) -> None:
    """The receipts of the last sends trip the breaker: nothing is left to hold or resume."""
    from apps.campaigns.control import control_tick
    from apps.campaigns.models import CampaignSettings
    from apps.delivery.redis_client import get_redis

    get_redis().delete("tidings:campaigns:control-lock")
    CampaignSettings.objects.create(project=project, min_sample=10)
    add_subscribers(project, 20)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    assert control_tick() is not None  # the breaker's window starts from this sample
    rows = Delivery.objects.filter(origin_kind="campaign", origin_id=str(campaign.pk))
    rows.filter(pk__in=list(rows.values_list("pk", flat=True)[:4])).update(state="bounced", sent_at=timezone.now())
    rows.exclude(state="bounced").update(state="delivered", sent_at=timezone.now())
    CampaignStats.objects.filter(campaign=campaign).update(sent=20, delivered=16, bounced=4, pending=0)

    report = control_tick()

    assert report is not None and report.tripped == 1
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.COMPLETED
    assert campaign.pause_reason.startswith("Reputation breaker: Bounce rate 20.00%")
    assert campaign.finished_at is not None
    assert campaign.events.filter(message__contains="It was paused: Reputation breaker").exists()


def test_paused_campaign_with_recipients_still_waiting_stays_paused(project: Any, make_campaign: Any) -> None:
    add_subscribers(project, 5)
    campaign = lifecycle.campaign_start(campaign=make_campaign())
    fan_out_inline(campaign)
    lifecycle.campaign_pause(campaign=campaign, reason="checking the copy")
    campaign_reconcile(campaign)
    campaign.refresh_from_db()
    assert campaign.state == CampaignState.PAUSED
