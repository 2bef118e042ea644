"""Housekeeping that keeps campaigns honest after crashes.

Reaper: fan-out chunks whose message was lost are queued again; rows that came back to
the queue after a pause (an in-flight batch retried them) are parked again. Claims that
expired because a worker died are returned by the delivery sweeper, which owns claims.

Reconciler: counts the ledger rows, corrects any counter that drifted and logs each
correction; a campaign completes only when no recipient is waiting, claimed or retrying.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from apps.campaigns import control, ledger
from apps.campaigns.lifecycle import queue_chunks
from apps.campaigns.models import Campaign, CampaignChunk, CampaignEvent, CampaignState, CampaignStats
from apps.campaigns.services import campaign_event

log = logging.getLogger(__name__)

# Counters the origin listener maintains: a difference from the rows is drift worth a log
# line. ``failed`` and ``retried`` are derived from attempts by the reconciler alone.
LIVE_COUNTERS = ("sent", "delivered", "bounced", "complained", "dead", "suppressed", "cancelled", "pending")
DERIVED_COUNTERS = ("failed", "retried", "total")
ACTIVE = (CampaignState.RUNNING, CampaignState.PAUSED)


def _chunk_timeout() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "TIDINGS_CAMPAIGN_CHUNK_TIMEOUT", 120)))


def campaigns_reap(*, now=None) -> dict[str, int]:
    now = now or timezone.now()
    report = {"chunks": 0, "reheld": 0}
    for campaign in Campaign.objects.filter(state__in=ACTIVE):
        # One campaign that cannot be reaped must not stop the others (other projects' too).
        try:
            _campaign_reap(campaign, now=now, report=report)
        except Exception:
            log.exception("campaign %s could not be reaped", campaign.pk, extra={"project_id": campaign.project_id})
    report["cancelled"] = _cancel_leftovers(now)
    return report


def _campaign_reap(campaign: Campaign, *, now, report: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
    with transaction.atomic():
        stale = list(
            CampaignChunk.objects.select_for_update(skip_locked=True)
            .filter(campaign=campaign, done=False, queued_at__lt=now - _chunk_timeout())
            .values_list("pk", flat=True)
        )
        if stale:
            CampaignChunk.objects.filter(pk__in=stale).update(queued_at=now)
            queue_chunks(campaign, stale)
            campaign_event(campaign, CampaignEvent.Kind.REAPER, f"{len(stale)} lost fan-out chunks queued again.")
            report["chunks"] += len(stale)
    if campaign.state == CampaignState.PAUSED:
        with transaction.atomic():
            moved = ledger.ledger_hold(
                project_id=campaign.project_id, campaign_id=campaign.pk, reason="campaign paused"
            )
            if moved:
                campaign_event(campaign, CampaignEvent.Kind.REAPER, f"{moved} retried deliveries held (paused).")
            report["reheld"] += moved


def _cancel_leftovers(now) -> int:  # type: ignore[no-untyped-def]
    """End the rows a cancel could not reach.

    A cancel ends every waiting row at once, but rows an in-flight batch had claimed at
    that moment come back to the queue when the batch records them (rate-deferred or
    retried), due as late as the campaign's rate spread them. They are ended here, within
    one reaper tick, instead of lingering as pending until their due time comes round.
    """
    ended = 0
    recent = Campaign.objects.filter(
        state=CampaignState.CANCELLED, stats__pending__gt=0, finished_at__gte=now - timedelta(days=1)
    )
    for campaign in recent:
        with transaction.atomic():
            moved = ledger.ledger_cancel(
                project_id=campaign.project_id, campaign_id=campaign.pk, reason="campaign cancelled"
            )
            if moved:
                CampaignStats.objects.filter(campaign=campaign).update(
                    cancelled=F("cancelled") + moved, pending=F("pending") - moved
                )
                campaign_event(
                    campaign, CampaignEvent.Kind.REAPER, f"{moved} deliveries an in-flight batch held were cancelled."
                )
            ended += moved
    return ended


def campaign_reconcile(campaign: Campaign) -> dict[str, tuple[int, int]]:
    """Correct the counters from the rows; returns {counter: (was, now)} for drifted ones."""
    with transaction.atomic():
        # Lock order everywhere: campaign, then its stats (fan-out chunks do the same).
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        stats = CampaignStats.objects.select_for_update().get(campaign=campaign)
        counts = ledger.ledger_counts(project_id=campaign.project_id, campaign_id=campaign.pk).as_dict()
        drift: dict[str, tuple[int, int]] = {}
        for name in LIVE_COUNTERS + DERIVED_COUNTERS:
            if name == "total" and counts["total"] == 0:
                continue  # before fan-out the total is the audience estimate
            was, truth = getattr(stats, name), counts[name]
            if was != truth:
                setattr(stats, name, truth)
                if name in LIVE_COUNTERS:
                    drift[name] = (was, truth)
        stats.save()
        if drift:
            text = ", ".join(f"{k} {a} → {b}" for k, (a, b) in drift.items())
            campaign_event(campaign, CampaignEvent.Kind.RECONCILE, f"Counters corrected from the ledger: {text}.")
            log.warning("campaign %s counter drift corrected: %s", campaign.pk, text)
        campaign_complete_if_done(campaign, pending=counts["pending"])
    return drift


def campaign_complete_if_done(campaign: Campaign, *, pending: int) -> bool:
    """Complete a running or paused campaign once no recipient is left to send to.

    A paused one (the breaker tripped on the receipts of its last sends, say) has nothing
    to resume: it completes too, and keeps its pause note to say why it stopped.
    """
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.state not in ACTIVE or pending:
        return False
    if CampaignChunk.objects.filter(campaign=campaign, done=False).exists():
        return False
    was_paused = campaign.state == CampaignState.PAUSED
    campaign.state = CampaignState.COMPLETED
    campaign.finished_at = timezone.now()
    campaign.save(update_fields=["state", "finished_at", "updated_at"])
    control.rate_release(campaign)
    note = f" It was paused: {campaign.pause_reason}" if was_paused and campaign.pause_reason else ""
    campaign_event(
        campaign,
        CampaignEvent.Kind.STATE,
        f"Completed: no recipient is waiting, claimed or retrying.{note}{_fan_out_losses(campaign)}",
    )
    return True


def _fan_out_losses(campaign: Campaign) -> str:
    """What fan-out could not queue, so a completed campaign says it was not everyone."""
    losses = CampaignChunk.objects.filter(campaign=campaign).aggregate(
        skipped=Count("pk", filter=~Q(failure_reason="")), recipients=Sum("failed_recipients")
    )
    parts = []
    if losses["skipped"]:
        parts.append(f"{losses['skipped']} fan-out chunks were skipped (poison or error)")
    if losses["recipients"]:
        parts.append(f"{losses['recipients']} recipients could not be queued")
    return f" {'; '.join(parts)}; see the fan-out events." if parts else ""


def campaigns_reconcile() -> int:
    corrected = 0
    for campaign in Campaign.objects.filter(state__in=ACTIVE):
        try:
            corrected += len(campaign_reconcile(campaign))
        except Exception:
            log.exception("campaign %s could not be reconciled", campaign.pk, extra={"project_id": campaign.project_id})
    return corrected
