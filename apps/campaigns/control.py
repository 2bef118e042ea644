"""The control loop beat runs every couple of seconds, once (a Redis lock), never per worker:

- AIMD: one target rate per running campaign, written to the campaign's own token bucket
  (never the provider account's), moved by what the dispatcher counted on the campaign's
  account (accepted vs throttled) since last tick;
- samples: a point per running campaign for the throughput chart and the breaker window;
- the reputation breaker: bounce/complaint rates over the sliding window pause a campaign.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from apps.campaigns import rate as ratelimit
from apps.campaigns.aimd import AimdParams, aimd_next
from apps.campaigns.breaker import WindowCounts, breaker_evaluate
from apps.campaigns.models import (
    Campaign,
    CampaignEvent,
    CampaignSample,
    CampaignSettings,
    CampaignState,
    CampaignStats,
)
from apps.delivery.redis_client import get_redis

log = logging.getLogger(__name__)

LOCK_KEY = "tidings:campaigns:control-lock"


def settings_for(project_id: int) -> CampaignSettings:
    found = CampaignSettings.objects.filter(project_id=project_id).first()
    return found or CampaignSettings(project_id=project_id)


def account_of(campaign: Campaign) -> str:
    return ratelimit.account_key_for(campaign.connector)


def _params(campaign: Campaign, conf: CampaignSettings) -> AimdParams:
    ceiling = campaign.max_rate or conf.max_rate
    return AimdParams(
        min_rate=float(min(conf.min_rate, ceiling)),
        max_rate=float(ceiling),
        increase_step=float(conf.increase_step),
        decrease_factor=float(conf.decrease_factor),
    )


def rate_read(campaign: Campaign) -> float:
    """The campaign's AIMD target in messages/s; 0 before it first ran."""
    target = CampaignStats.objects.filter(campaign=campaign).values_list("target_rate", flat=True).first()
    return float(target or 0)


def rate_write(campaign: Campaign, *, target: float) -> None:
    # Only while it runs: a tick that loaded the campaign just before a pause or cancel
    # committed must not bring back the bucket the stop deleted.
    running = CampaignStats.objects.filter(campaign=campaign, campaign__state=CampaignState.RUNNING)
    if running.update(target_rate=target):
        ratelimit.campaign_bucket_set(campaign.project_id, campaign.pk, target)


def rate_prepare(campaign: Campaign) -> None:
    """A campaign (re)starting sends at its initial rate, or where AIMD had taken it before
    a pause, within its ceiling."""
    conf = settings_for(campaign.project_id)
    params = _params(campaign, conf)
    target = rate_read(campaign) or float(campaign.initial_rate or conf.initial_rate)
    rate_write(campaign, target=max(params.min_rate, min(params.max_rate, target)))


def rate_release(campaign: Campaign) -> None:
    """Once the transaction that stops the campaign commits, its limit stops applying."""
    project_id, campaign_id = campaign.project_id, campaign.pk
    transaction.on_commit(lambda: ratelimit.campaign_bucket_clear(project_id, campaign_id))


@dataclass
class TickReport:
    accounts: int = 0
    campaigns: int = 0
    tripped: int = 0


def control_tick() -> TickReport | None:
    """One pass of AIMD, samples and breaker; None when another process holds the loop."""
    redis = get_redis()
    if not redis.set(LOCK_KEY, "1", nx=True, ex=30):
        return None
    try:
        return _tick()
    finally:
        redis.delete(LOCK_KEY)


_legacy_checked = False


def _tick() -> TickReport:
    global _legacy_checked
    if not _legacy_checked:
        if cleared := ratelimit.legacy_account_overrides_clear():
            log.warning("gave %s provider accounts back their configured rate", cleared)
        _legacy_checked = True
    report = TickReport()
    running = list(Campaign.objects.filter(state=CampaignState.RUNNING).select_related("connector"))
    counters: dict[str, dict[str, float]] = {}
    for campaign in running:
        account = account_of(campaign)
        if account not in counters:
            counters[account] = ratelimit.account_counters(account)
        aimd_step(campaign, counters[account])
    report.accounts = len(counters)
    now = timezone.now()
    for campaign in running:
        sample_record(campaign, target=rate_read(campaign), now=now)
        report.campaigns += 1
        if breaker_check(campaign, now=now):
            report.tripped += 1
        if _maybe_finished(campaign):
            from apps.campaigns.reconcile import campaign_reconcile

            # Counters say nothing is left: let the rows confirm it and complete.
            campaign_reconcile(campaign)
    return report


def _maybe_finished(campaign: Campaign) -> bool:
    from apps.campaigns.models import CampaignChunk

    pending = CampaignStats.objects.filter(campaign=campaign).values_list("pending", flat=True).first()
    return (pending or 0) <= 0 and not CampaignChunk.objects.filter(campaign=campaign, done=False).exists()


def aimd_step(campaign: Campaign, counters: dict[str, float]) -> float:
    """Apply one AIMD decision to the campaign from its account's counters since last tick."""
    ok, throttled = int(counters.get("ok", 0)), int(counters.get("throttled", 0))
    conf = settings_for(campaign.project_id)
    target = rate_read(campaign) or float(campaign.initial_rate or conf.initial_rate)
    decision = aimd_next(target, ok=ok, throttled=throttled, params=_params(campaign, conf))
    rate_write(campaign, target=decision.target_rate)
    if decision.action == "decrease":
        CampaignEvent.objects.create(
            project_id=campaign.project_id,
            campaign=campaign,
            kind=CampaignEvent.Kind.RATE,
            message=f"Throttled ({throttled} of {ok + throttled}): target rate {target:.0f} → "
            f"{decision.target_rate:.0f}/s.",
            data={"from": target, "to": decision.target_rate, "ok": ok, "throttled": throttled},
        )
    return decision.target_rate


def sample_record(campaign: Campaign, *, target: float, now=None) -> CampaignSample:
    now = now or timezone.now()
    stats = CampaignStats.objects.get(campaign=campaign)
    last = CampaignSample.objects.filter(campaign=campaign).order_by("-at").first()
    rate = 0.0
    if last is not None:
        seconds = (now - last.at).total_seconds()
        if seconds > 0:
            rate = max(0.0, (stats.sent - last.sent) / seconds)
    CampaignStats.objects.filter(pk=stats.pk).update(current_rate=rate, target_rate=target)
    return CampaignSample.objects.create(
        project_id=campaign.project_id,
        campaign=campaign,
        at=now,
        sent=stats.sent,
        delivered=stats.delivered,
        bounced=stats.bounced,
        complained=stats.complained,
        rate=rate,
        target_rate=target,
    )


def window_counts(campaign: Campaign, *, now, seconds: int) -> WindowCounts:
    """Counter deltas between now and the newest sample at least one window old (or the
    first sample after the breaker was last reset)."""
    since = now - timedelta(seconds=seconds)
    if campaign.breaker_since and campaign.breaker_since > since:
        since = campaign.breaker_since
    samples = CampaignSample.objects.filter(campaign=campaign)
    base = samples.filter(at__lte=since).order_by("-at").first() or samples.filter(at__gte=since).order_by("at").first()
    stats = CampaignStats.objects.get(campaign=campaign)
    if base is None:
        return WindowCounts(stats.sent, stats.bounced, stats.complained, stats.delivered)
    return WindowCounts(
        stats.sent - base.sent,
        stats.bounced - base.bounced,
        stats.complained - base.complained,
        stats.delivered - base.delivered,
    )


def breaker_check(campaign: Campaign, *, now=None) -> bool:
    from apps.campaigns.lifecycle import campaign_pause

    now = now or timezone.now()
    conf = settings_for(campaign.project_id)
    counts = window_counts(campaign, now=now, seconds=conf.window_seconds)
    verdict = breaker_evaluate(
        counts,
        bounce_threshold=Decimal(conf.bounce_threshold),
        complaint_threshold=Decimal(conf.complaint_threshold),
        min_sample=conf.min_sample,
    )
    if not verdict.trip:
        return False
    from apps.core.errors import ApplicationError

    try:
        campaign_pause(campaign=campaign, reason=f"Reputation breaker: {verdict.reason}")
    except ApplicationError:
        return False  # paused or finished meanwhile
    CampaignEvent.objects.create(
        project_id=campaign.project_id,
        campaign=campaign,
        kind=CampaignEvent.Kind.BREAKER,
        message=verdict.reason,
        data={"metric": verdict.metric, "rate": verdict.rate, "judged": counts.judged},
    )
    log.warning("campaign %s paused by the breaker: %s", campaign.pk, verdict.reason)
    return True
