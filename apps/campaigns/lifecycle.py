"""The campaign state machine

    draft → scheduled → running ⇄ paused → completed / cancelled

Each transition locks the campaign row, checks the state it starts from, and changes the
campaign's ledger rows with one set-based statement.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.campaigns import control, ledger
from apps.campaigns.audience import audience_bounds, chunk_ranges
from apps.campaigns.models import Campaign, CampaignChunk, CampaignEvent, CampaignState, CampaignStats
from apps.campaigns.services import campaign_event
from apps.core.errors import ApplicationError, Conflict
from apps.delivery.models import Connector, TemplateVersion
from apps.projects.models import Project


def chunk_size() -> int:
    return int(getattr(settings, "TIDINGS_CAMPAIGN_CHUNK_SIZE", 10000))


def _lock(campaign: Campaign) -> Campaign:
    return Campaign.objects.select_for_update(of=("self",)).select_related("template", "connector").get(pk=campaign.pk)


def _frozen_version(campaign: Campaign) -> TemplateVersion:
    if campaign.template_version_id is not None:
        version = campaign.template_version
    else:
        version = (
            TemplateVersion.objects.filter(template_id=campaign.template_id, published_at__isnull=False)
            .order_by("-number")
            .first()
        )
    if version is None or version.published_at is None:
        raise ApplicationError(
            f"Template {campaign.template.key!r} has no published version yet; publish it before sending.",
            code="template_draft",
            field="template",
        )
    if campaign.channel not in (version.content or {}):
        raise ApplicationError(
            f"Version {version.number} of {campaign.template.key!r} has no {campaign.channel} content.",
            code="template_channel_missing",
            field="template",
        )
    return version


def _resolve_connector(campaign: Campaign) -> Connector:
    connector = campaign.connector
    if connector is None:
        connector = (
            Connector.objects.for_project(campaign.project_id).filter(channel=campaign.channel, is_default=True).first()
        )
    if connector is None:
        raise ApplicationError(
            f"This project has no {campaign.channel} connector; add one or choose one.",
            code="no_connector",
            field="connector",
        )
    if connector.project_id != campaign.project_id:
        raise ApplicationError(
            "That connector belongs to another project.", code="connector_other_project", field="connector"
        )
    if connector.channel != campaign.channel:
        raise ApplicationError(
            f"Connector {connector} sends {connector.channel}, not {campaign.channel}.",
            code="connector_wrong_channel",
            field="connector",
        )
    return connector


def _import_running(project: Project) -> bool:
    from apps.subscribers import selectors

    return bool(selectors.import_running(project))


@transaction.atomic
def campaign_start(*, campaign: Campaign) -> Campaign:
    """Freeze the template version and fan the audience out into bulk-lane deliveries.

    Refused while an import into the project is running: the audience is resolved chunk
    by chunk after start, so a half-finished import would make who gets the message
    depend on timing. (The audience is the subscribers present when each chunk runs.)
    """
    campaign = _lock(campaign)
    if campaign.state == CampaignState.RUNNING:
        raise Conflict("The campaign is already running.", code="campaign_already_running")
    if campaign.state == CampaignState.PAUSED:
        raise Conflict("The campaign is paused; resume it instead.", code="campaign_paused")
    if campaign.is_terminal:
        raise Conflict(f"A {campaign.state} campaign cannot be started again.", code="campaign_finished")
    version = _frozen_version(campaign)
    connector = _resolve_connector(campaign)
    if _import_running(campaign.project):
        raise Conflict(
            "An import into this project is still running; start the campaign when it has finished.",
            code="import_running",
        )
    count, low, high = audience_bounds(campaign)
    if count == 0:
        raise ApplicationError(
            "The audience has no recipients with an address for this channel.",
            code="no_recipients",
            field="audience_kind",
        )
    campaign.template_version = version
    campaign.connector = connector
    now = timezone.now()
    if campaign.send_at and campaign.send_at > now and campaign.state == CampaignState.DRAFT:
        campaign.state = CampaignState.SCHEDULED
        campaign.save(update_fields=["template_version", "connector", "state", "updated_at"])
        campaign_event(campaign, CampaignEvent.Kind.STATE, f"Scheduled for {campaign.send_at:%Y-%m-%d %H:%M} UTC.")
        return campaign
    return _begin(campaign, count=count, low=low, high=high, now=now)


def _begin(campaign: Campaign, *, count: int, low: int, high: int, now: datetime) -> Campaign:
    ranges = chunk_ranges(low, high, chunk_size())
    CampaignChunk.objects.bulk_create(
        [
            CampaignChunk(project_id=campaign.project_id, campaign=campaign, lo=lo, hi=hi, queued_at=now)
            for lo, hi in ranges
        ]
    )
    campaign.state = CampaignState.RUNNING
    campaign.started_at = now
    campaign.breaker_since = now
    campaign.total_recipients = count
    campaign.chunks_total = len(ranges)
    campaign.save()
    CampaignStats.objects.filter(campaign=campaign).update(total=count, pending=0, target_rate=0)
    control.rate_prepare(campaign)
    campaign_event(
        campaign,
        CampaignEvent.Kind.STATE,
        f"Started: {count} recipients in {len(ranges)} chunks, template version {campaign.template_version.number}.",
    )
    queue_chunks(campaign, [c.pk for c in CampaignChunk.objects.filter(campaign=campaign, done=False)])
    return campaign


def queue_chunks(campaign: Campaign, chunk_ids: list[int]) -> None:
    from apps.campaigns.tasks import campaign_fanout_chunk

    def send() -> None:
        for chunk_id in chunk_ids:
            campaign_fanout_chunk.apply_async(args=[campaign.project_id, campaign.pk, chunk_id], queue="campaigns")

    transaction.on_commit(send)


def _wake_bulk() -> None:
    from apps.delivery.wake import wake_on_commit

    wake_on_commit(["bulk"])


@transaction.atomic
def campaign_pause(*, campaign: Campaign, reason: str = "Paused by hand.") -> Campaign:
    """Nothing new is claimed; batches already claimed finish and are recorded."""
    campaign = _lock(campaign)
    if campaign.state != CampaignState.RUNNING:
        raise Conflict(f"Only a running campaign can be paused; this one is {campaign.state}.", code="not_running")
    held = ledger.ledger_hold(project_id=campaign.project_id, campaign_id=campaign.pk, reason="campaign paused")
    campaign.state = CampaignState.PAUSED
    campaign.pause_reason = reason[:500]
    campaign.paused_at = timezone.now()
    campaign.save(update_fields=["state", "pause_reason", "paused_at", "updated_at"])
    control.rate_release(campaign)
    campaign_event(campaign, CampaignEvent.Kind.STATE, f"Paused: {reason} ({held} waiting deliveries held).")
    return campaign


@transaction.atomic
def campaign_resume(*, campaign: Campaign) -> Campaign:
    """Puts back only the rows pause parked: nobody already sent or in flight is sent again."""
    campaign = _lock(campaign)
    if campaign.state == CampaignState.COMPLETED:
        raise Conflict("The campaign has completed; there is nothing to resume.", code="campaign_completed")
    if campaign.state != CampaignState.PAUSED:
        raise Conflict(f"Only a paused campaign can be resumed; this one is {campaign.state}.", code="not_paused")
    released = ledger.ledger_release(project_id=campaign.project_id, campaign_id=campaign.pk, reason="campaign resumed")
    now = timezone.now()
    campaign.state = CampaignState.RUNNING
    campaign.pause_reason = ""
    campaign.paused_at = None
    # The breaker judges what happens from here on, or the bounces that tripped it would
    # trip it again at once.
    campaign.breaker_since = now
    campaign.save(update_fields=["state", "pause_reason", "paused_at", "breaker_since", "updated_at"])
    control.rate_prepare(campaign)
    campaign_event(campaign, CampaignEvent.Kind.STATE, f"Resumed: {released} deliveries back in the queue.")
    queue_chunks(
        campaign, list(CampaignChunk.objects.filter(campaign=campaign, done=False).values_list("pk", flat=True))
    )
    _wake_bulk()
    return campaign


@transaction.atomic
def campaign_cancel(*, campaign: Campaign, reason: str = "Cancelled by hand.") -> Campaign:
    """Waiting deliveries become ``cancelled`` and stay in the ledger for audit."""
    campaign = _lock(campaign)
    if campaign.is_terminal:
        raise Conflict(f"The campaign is already {campaign.state}.", code="campaign_finished")
    cancelled = ledger.ledger_cancel(project_id=campaign.project_id, campaign_id=campaign.pk, reason=reason)
    CampaignChunk.objects.filter(campaign=campaign, done=False).update(done=True, done_at=timezone.now())
    CampaignStats.objects.filter(campaign=campaign).update(
        cancelled=F("cancelled") + cancelled, pending=F("pending") - cancelled
    )
    campaign.state = CampaignState.CANCELLED
    campaign.finished_at = timezone.now()
    campaign.save(update_fields=["state", "finished_at", "updated_at"])
    control.rate_release(campaign)
    campaign_event(campaign, CampaignEvent.Kind.STATE, f"Cancelled: {reason} ({cancelled} waiting deliveries kept).")
    return campaign


@transaction.atomic
def campaign_retry(*, campaign: Campaign) -> int:
    """Dead letters only go round again; everything else is left exactly as it is."""
    campaign = _lock(campaign)
    if campaign.state in (CampaignState.DRAFT, CampaignState.SCHEDULED, CampaignState.CANCELLED):
        raise Conflict(f"A {campaign.state} campaign has no dead letters to retry.", code="nothing_to_retry")
    paused = campaign.state == CampaignState.PAUSED
    moved = ledger.ledger_retry_dead(
        project_id=campaign.project_id, campaign_id=campaign.pk, reason="dead letter retried", hold=paused
    )
    if moved == 0:
        raise ApplicationError("This campaign has no dead letters.", code="no_dead_letters")
    CampaignStats.objects.filter(campaign=campaign).update(dead=F("dead") - moved, pending=F("pending") + moved)
    if campaign.state == CampaignState.COMPLETED:
        campaign.state = CampaignState.RUNNING
        campaign.finished_at = None
        campaign.save(update_fields=["state", "finished_at", "updated_at"])
        control.rate_prepare(campaign)
    campaign_event(campaign, CampaignEvent.Kind.RETRY, f"{moved} dead letters queued again.")
    if not paused:
        _wake_bulk()
    return moved


@transaction.atomic
def campaign_start_due(*, now: datetime | None = None) -> int:
    """Beat: scheduled campaigns whose send time has come begin their fan-out."""
    now = now or timezone.now()
    started = 0
    for campaign in Campaign.objects.select_for_update(skip_locked=True).filter(
        state=CampaignState.SCHEDULED, send_at__lte=now
    ):
        try:
            count, low, high = audience_bounds(campaign)
            if count == 0:
                raise ApplicationError("The audience is empty.", code="no_recipients")
            _begin(campaign, count=count, low=low, high=high, now=now)
            started += 1
        except ApplicationError as error:
            campaign.state = CampaignState.CANCELLED
            campaign.finished_at = now
            campaign.save(update_fields=["state", "finished_at", "updated_at"])
            campaign_event(campaign, CampaignEvent.Kind.STATE, f"Could not start at its send time: {error.message}")
    return started
