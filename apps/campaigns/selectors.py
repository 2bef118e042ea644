"""Reads for campaigns. The progress snapshot is the one shape shared by the API, the
console page and the live stream, so all three always show the same figures."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from apps.campaigns.models import Campaign, CampaignEvent, CampaignSample, CampaignSettings, CampaignStats
from apps.core.errors import NotFound
from apps.projects.models import Project

COUNTERS = (
    "total",
    "sent",
    "delivered",
    "failed",
    "retried",
    "dead",
    "bounced",
    "complained",
    "suppressed",
    "cancelled",
    "pending",
)


def campaign_list(project: Project, *, search: str = "", state: str = "") -> QuerySet[Campaign]:
    qs = Campaign.objects.for_project(project).select_related("stats", "template").order_by("-created_at")
    if search:
        qs = qs.filter(Q(name__icontains=search) | Q(template__key__icontains=search))
    if state:
        qs = qs.filter(state=state)
    return qs


def campaign_get(project: Project, campaign_id: int | str) -> Campaign:
    try:
        return (
            Campaign.objects.for_project(project)
            .select_related("template", "template_version", "connector")
            .get(pk=int(campaign_id))
        )
    except (Campaign.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such campaign in this project.", code="campaign_not_found") from None


def campaign_settings(project: Project) -> CampaignSettings:
    return CampaignSettings.objects.filter(project=project).first() or CampaignSettings(project=project)


def _stats(campaign: Campaign) -> CampaignStats:
    return CampaignStats.objects.filter(campaign=campaign).first() or CampaignStats(campaign=campaign)


def campaign_counters(campaign: Campaign) -> dict[str, Any]:
    stats = _stats(campaign)
    figures: dict[str, Any] = {name: max(0, int(getattr(stats, name))) for name in COUNTERS}
    figures["total"] = figures["total"] or campaign.total_recipients
    figures["current_rate"] = round(stats.current_rate, 1)
    figures["target_rate"] = round(stats.target_rate, 1)
    done = figures["sent"] + figures["dead"] + figures["suppressed"] + figures["cancelled"]
    figures["progress"] = round(100.0 * done / figures["total"], 1) if figures["total"] else 0.0
    remaining = max(0, figures["total"] - done)
    rate = stats.current_rate or 0
    figures["eta_seconds"] = int(remaining / rate) if rate > 0 and campaign.state == "running" else None
    return figures


def campaign_progress(campaign: Campaign, *, events: int = 15, samples: int = 180) -> dict[str, Any]:
    recent = list(CampaignEvent.objects.filter(campaign=campaign).order_by("-id")[:events])
    points = list(CampaignSample.objects.filter(campaign=campaign).order_by("-at")[:samples])
    points.reverse()
    return {
        "id": campaign.pk,
        "name": campaign.name,
        "state": campaign.state,
        "pause_reason": campaign.pause_reason,
        "started_at": campaign.started_at.isoformat() if campaign.started_at else None,
        "finished_at": campaign.finished_at.isoformat() if campaign.finished_at else None,
        "counters": campaign_counters(campaign),
        "events": [{"at": e.created_at.isoformat(), "kind": e.kind, "message": e.message} for e in recent],
        "throughput": [
            {"at": p.at.isoformat(), "rate": round(p.rate, 1), "target": round(p.target_rate, 1), "sent": p.sent}
            for p in points
        ],
    }
