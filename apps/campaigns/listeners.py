"""The "campaign" origin listener: live counters, kept in the dispatcher's transaction.

The dispatcher (final send outcomes) and receipt ingest (delivered, bounced, complained)
call this with batches; each batch becomes one UPDATE per campaign, committed or rolled
back together with the ledger rows it describes, so counters cannot run ahead of rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from django.db.models import F

from apps.campaigns.ledger import HOLD_UNTIL
from apps.campaigns.models import Campaign, CampaignState, CampaignStats
from apps.delivery.origins import FinalOutcome

# Final outcome state → the counter it moves. "sent" also counts toward nothing else.
COUNTER_FOR_STATE = {
    "sent": "sent",
    "delivered": "delivered",
    "bounced": "bounced",
    "complained": "complained",
    "failed": "dead",
    "dead": "dead",
    "suppressed": "suppressed",
    "opted_out": "suppressed",
    "cancelled": "cancelled",
}


def campaign_outcomes_record(outcomes: Sequence[FinalOutcome]) -> None:
    per_campaign: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
    for outcome in outcomes:
        counter = COUNTER_FOR_STATE.get(outcome.state)
        if counter is None or not outcome.origin_id.isdigit():
            continue
        per_campaign[(outcome.project_id, int(outcome.origin_id))][counter] += 1
    for (project_id, campaign_id), counts in sorted(per_campaign.items()):
        changes = {name: F(name) + n for name, n in counts.items()}
        finished = sum(n for name, n in counts.items() if name in ("sent", "dead", "suppressed", "cancelled"))
        if finished:
            changes["pending"] = F("pending") - finished
        CampaignStats.objects.filter(project_id=project_id, campaign_id=campaign_id).update(**changes)


def campaign_claims_hold(rows: Sequence[Any]) -> dict[int, tuple[str, Any, str]]:
    """Dispatcher hook: rows of a campaign that is no longer running are not sent.

    A pause parks waiting rows in one statement, but a batch in flight at that moment can
    put rows back in the queue (rate-deferred or retried); they are caught here, at the
    next claim, and parked again. One query per claimed batch.
    """
    ids = {int(r.origin_id) for r in rows if str(r.origin_id).isdigit()}
    if not ids:
        return {}
    stopped = dict(Campaign.objects.filter(pk__in=ids).exclude(state=CampaignState.RUNNING).values_list("pk", "state"))
    held: dict[int, tuple[str, Any, str]] = {}
    for row in rows:
        state = stopped.get(int(row.origin_id)) if str(row.origin_id).isdigit() else None
        if state == CampaignState.PAUSED:
            held[row.id] = ("queued", HOLD_UNTIL, "campaign paused")
        elif state is not None:
            held[row.id] = ("cancelled", None, f"campaign {state}")
    return held
