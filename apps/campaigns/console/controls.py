"""Which controls a campaign's page offers, and the one clock format its times use.

The page and the action view ask the same function, so a button the page hides is also
refused when posted by hand (an old tab, a script).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from apps.campaigns.models import Campaign, CampaignState

ACTIONS = ("start", "pause", "resume", "retry", "cancel")

_STATES: dict[str, frozenset[str]] = {
    "start": frozenset({CampaignState.DRAFT, CampaignState.SCHEDULED}),
    "pause": frozenset({CampaignState.RUNNING}),
    "resume": frozenset({CampaignState.PAUSED}),
    # Dead letters exist only once sending began; a cancelled campaign sends nothing more.
    "retry": frozenset({CampaignState.RUNNING, CampaignState.PAUSED, CampaignState.COMPLETED}),
    "cancel": frozenset({CampaignState.DRAFT, CampaignState.SCHEDULED, CampaignState.RUNNING, CampaignState.PAUSED}),
}

CLOCK_FORMAT = "%Y-%m-%d %H:%M:%S UTC"


def campaign_controls(campaign: Campaign, counters: dict[str, Any]) -> list[str]:
    """The actions open to ``campaign`` now, in page order."""
    allowed = [action for action in ACTIONS if campaign.state in _STATES[action]]
    if "retry" in allowed and not counters.get("dead"):
        allowed.remove("retry")
    return allowed


def refusal(campaign: Campaign, action: str) -> str:
    if action == "retry" and campaign.state in _STATES["retry"]:
        return "This campaign has no dead letters to retry."
    return f"A {campaign.state} campaign cannot {action}."


def clock(value: datetime | str | None) -> str:
    """Every time on the campaign page, server- or script-rendered, in one format (UTC)."""
    if value is None or value == "":
        return "—"
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(CLOCK_FORMAT)
