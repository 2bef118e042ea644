"""One fan-out chunk: an id range of the audience becomes bulk-lane deliveries in one
``INSERT … SELECT``. The chunk is marked done in the same transaction, so a chunk
message delivered twice, or re-queued by the reaper, inserts nothing new."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from apps.campaigns.audience import audience_sql
from apps.campaigns.ledger import HOLD_UNTIL
from apps.campaigns.models import Campaign, CampaignChunk, CampaignState, CampaignStats
from apps.delivery.services import deliveries_enqueue_for_subscribers


@transaction.atomic
def campaign_chunk_fan_out(*, project_id: int, campaign_id: int, chunk_id: int) -> int:
    chunk = (
        CampaignChunk.objects.for_project(project_id)
        .select_for_update(skip_locked=True)
        .filter(pk=chunk_id, campaign_id=campaign_id, done=False)
        .first()
    )
    if chunk is None:
        return 0  # done already, or another worker holds it right now
    # FOR SHARE: chunks run in parallel, but a pause or cancel waits for them to commit,
    # so the pause's hold sees every row a chunk inserted.
    with connection.cursor() as cursor:
        cursor.execute("SELECT state FROM campaigns_campaign WHERE id = %s FOR SHARE", [campaign_id])
        (state,) = cursor.fetchone()
    campaign = Campaign.objects.get(pk=campaign_id)
    inserted = 0
    if state in (CampaignState.RUNNING, CampaignState.PAUSED):
        sql, params = audience_sql(campaign, lo=chunk.lo, hi=chunk.hi)
        inserted = deliveries_enqueue_for_subscribers(
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
            # A paused campaign's rows are parked from the start; resume releases them.
            due_at=HOLD_UNTIL if state == CampaignState.PAUSED else None,
        )
    chunk.done = True
    chunk.enqueued = inserted
    chunk.done_at = timezone.now()
    chunk.save(update_fields=["done", "enqueued", "done_at"])
    if inserted:
        CampaignStats.objects.filter(campaign_id=campaign_id).update(pending=F("pending") + inserted)
    return inserted
