"""One fan-out chunk: an id range of the audience becomes bulk-lane deliveries in one
``INSERT … SELECT``. The chunk is marked done in the same transaction, so a chunk
message delivered twice, or re-queued by the reaper, inserts nothing new.

A chunk is claimed in a transaction of its own, committed before it runs: a worker that
dies mid-chunk (killed, out of memory, a lost connection) leaves that claim counted on
the row. After ``TIDINGS_POISON_AFTER_CRASHES`` such claims the chunk is skipped as
"poison" rather than handed to the next worker, and the campaign completes without it.
An error that one recipient's data causes (a value the ledger cannot hold) is narrowed
down by halving the id range, so that recipient alone is recorded on the chunk and the
rest of the chunk is queued; any other error ends the chunk with its reason.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.db import DataError, IntegrityError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from apps.campaigns.audience import audience_sql
from apps.campaigns.ledger import HOLD_UNTIL
from apps.campaigns.models import Campaign, CampaignChunk, CampaignEvent, CampaignState, CampaignStats
from apps.campaigns.services import campaign_event
from apps.core.errors import exception_reason
from apps.delivery.services import deliveries_enqueue_for_subscribers

log = logging.getLogger(__name__)

POISON = "poison"
MAX_STORED_FAILURES = 50
# What one recipient's row can raise inside the INSERT; anything else is the chunk's own.
RECIPIENT_ERRORS = (DataError, IntegrityError)


def campaign_chunk_fan_out(*, project_id: int, campaign_id: int, chunk_id: int) -> int:
    if not _chunk_claim(project_id=project_id, campaign_id=campaign_id, chunk_id=chunk_id):
        return 0
    try:
        return _chunk_run(project_id=project_id, campaign_id=campaign_id, chunk_id=chunk_id)
    except OperationalError:
        raise  # transient (connection lost, lock timeout): the task retries, and the claim counts
    except Exception as exc:
        log.exception("campaign %s chunk %s failed", campaign_id, chunk_id, extra={"project_id": project_id})
        _chunk_fail(project_id=project_id, campaign_id=campaign_id, chunk_id=chunk_id, reason=exception_reason(exc))
        return 0


def _open_chunk(project_id: int, campaign_id: int, chunk_id: int, *, skip_locked: bool) -> CampaignChunk | None:
    """The chunk, locked, while it is still to do; None once done (or, skipping locked
    rows, while another worker holds it)."""
    return (
        CampaignChunk.objects.for_project(project_id)
        .select_for_update(skip_locked=skip_locked)
        .filter(pk=chunk_id, campaign_id=campaign_id, done=False)
        .first()
    )


@transaction.atomic
def _chunk_claim(*, project_id: int, campaign_id: int, chunk_id: int) -> bool:
    """Count this claim, or end the chunk as poison when its budget is spent."""
    chunk = _open_chunk(project_id, campaign_id, chunk_id, skip_locked=True)
    if chunk is None:
        return False  # done already, or another worker holds it right now
    budget = int(settings.TIDINGS_POISON_AFTER_CRASHES)
    if chunk.crashes >= budget:
        _chunk_end(chunk, reason=POISON)
        campaign_event(
            chunk.campaign,
            CampaignEvent.Kind.FANOUT,
            f"Subscriber ids {chunk.lo} to {chunk.hi - 1} skipped as poison: fan-out of this chunk stopped "
            f"its worker {chunk.crashes} times.",
            chunk_id=chunk.pk,
            reason=POISON,
        )
        return False
    chunk.crashes += 1
    chunk.save(update_fields=["crashes"])
    return True


def _chunk_end(chunk: CampaignChunk, *, reason: str) -> None:
    chunk.done = True
    chunk.done_at = timezone.now()
    chunk.failure_reason = reason[:500]
    chunk.save(update_fields=["done", "done_at", "failure_reason"])


@transaction.atomic
def _chunk_fail(*, project_id: int, campaign_id: int, chunk_id: int, reason: str) -> None:
    chunk = _open_chunk(project_id, campaign_id, chunk_id, skip_locked=False)
    if chunk is None:
        return
    _chunk_end(chunk, reason=reason)
    campaign_event(
        chunk.campaign,
        CampaignEvent.Kind.FANOUT,
        f"Subscriber ids {chunk.lo} to {chunk.hi - 1} were not queued: {reason}",
        chunk_id=chunk.pk,
        reason=reason,
    )


@transaction.atomic
def _chunk_run(*, project_id: int, campaign_id: int, chunk_id: int) -> int:
    chunk = _open_chunk(project_id, campaign_id, chunk_id, skip_locked=True)
    if chunk is None:
        return 0  # done already, or another worker holds it right now
    # FOR SHARE: chunks run in parallel, but a pause or cancel waits for them to commit,
    # so the pause's hold sees every row a chunk inserted.
    with connection.cursor() as cursor:
        cursor.execute("SELECT state FROM campaigns_campaign WHERE id = %s FOR SHARE", [campaign_id])
        (state,) = cursor.fetchone()
    campaign = Campaign.objects.get(pk=campaign_id)
    inserted = 0
    failures: list[dict[str, object]] = []
    if state in (CampaignState.RUNNING, CampaignState.PAUSED):
        # A paused campaign's rows are parked from the start; resume releases them.
        due_at = HOLD_UNTIL if state == CampaignState.PAUSED else None
        inserted = _enqueue_range(campaign, lo=chunk.lo, hi=chunk.hi, due_at=due_at, failures=failures)
    chunk.done = True
    chunk.enqueued = inserted
    chunk.done_at = timezone.now()
    fields = ["done", "enqueued", "done_at"]
    if failures:
        chunk.failed_recipients = len(failures)
        chunk.failures = failures[:MAX_STORED_FAILURES]
        fields += ["failed_recipients", "failures"]
        campaign_event(
            campaign,
            CampaignEvent.Kind.FANOUT,
            f"{len(failures)} recipients of subscriber ids {chunk.lo} to {chunk.hi - 1} could not be queued; "
            f"first: subscriber {failures[0]['subscriber_id']}, {failures[0]['reason']}",
            chunk_id=chunk.pk,
        )
    chunk.save(update_fields=fields)
    if inserted:
        CampaignStats.objects.filter(campaign_id=campaign_id).update(pending=F("pending") + inserted)
    return inserted


def _enqueue_range(
    campaign: Campaign, *, lo: int, hi: int, due_at: datetime | None, failures: list[dict[str, object]]
) -> int:
    """Queue ``lo <= id < hi``; a range one recipient spoils is halved until only that
    recipient is left out (a few more statements per bad recipient, none otherwise)."""
    try:
        with transaction.atomic():
            return _enqueue(campaign, lo=lo, hi=hi, due_at=due_at)
    except RECIPIENT_ERRORS as exc:
        if hi - lo <= 1:
            failures.append({"subscriber_id": lo, "reason": exception_reason(exc)})
            return 0
    mid = (lo + hi) // 2
    return _enqueue_range(campaign, lo=lo, hi=mid, due_at=due_at, failures=failures) + _enqueue_range(
        campaign, lo=mid, hi=hi, due_at=due_at, failures=failures
    )


def _enqueue(campaign: Campaign, *, lo: int, hi: int, due_at: datetime | None) -> int:
    sql, params = audience_sql(campaign, lo=lo, hi=hi)
    return deliveries_enqueue_for_subscribers(
        project=campaign.project,
        subscriber_ids_sql=sql,
        params=params,
        channel=campaign.channel,
        lane="bulk",
        origin_kind="campaign",
        origin_id=campaign.origin_id,
        template_version_id=campaign.template_version_id,
        key_prefix=campaign.key_prefix,
        connector_id=campaign.connector_id,
        category=campaign.category,
        due_at=due_at,
    )
