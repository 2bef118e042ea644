"""Writes for campaigns: create, edit, delete, project settings. The state machine
lives in ``lifecycle.py``."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction

from apps.campaigns.models import (
    AudienceKind,
    Campaign,
    CampaignEvent,
    CampaignSettings,
    CampaignState,
    CampaignStats,
)
from apps.core.errors import ApplicationError, Conflict
from apps.delivery.models import Connector, Template
from apps.projects.models import Project
from apps.subscribers.models import Segment

log = logging.getLogger(__name__)

EDITABLE_STATES = frozenset({CampaignState.DRAFT, CampaignState.SCHEDULED})
EDITABLE_FIELDS = (
    "name",
    "template",
    "connector",
    "audience_kind",
    "audience_segment",
    "audience_tag",
    "audience_list",
    "send_at",
    "max_rate",
    "initial_rate",
    "category",
)


def campaign_event(campaign: Campaign, kind: str, message: str, **data: Any) -> CampaignEvent:
    log.info("campaign %s %s: %s", campaign.pk, kind, message, extra={"project_id": campaign.project_id})
    return CampaignEvent.objects.create(
        project_id=campaign.project_id, campaign=campaign, kind=kind, message=message[:500], data=data
    )


def _validate_refs(*, project: Project, values: dict[str, Any]) -> None:
    template = values.get("template")
    if template is not None and template.project_id != project.pk:
        raise ApplicationError("No such template in this project.", code="template_not_found", field="template")
    connector = values.get("connector")
    if connector is not None and connector.project_id != project.pk:
        raise ApplicationError(
            "That connector belongs to another project.", code="connector_other_project", field="connector"
        )
    segment = values.get("audience_segment")
    if segment is not None and segment.project_id != project.pk:
        raise ApplicationError("No such segment in this project.", code="segment_not_found", field="audience_segment")
    kind = values.get("audience_kind", AudienceKind.EVERYONE)
    if kind == AudienceKind.SEGMENT and segment is None:
        raise ApplicationError("Choose the segment to send to.", code="required", field="audience_segment")
    if kind == AudienceKind.TAG and not values.get("audience_tag"):
        raise ApplicationError("Name the tag to send to.", code="required", field="audience_tag")
    if kind == AudienceKind.LIST and not values.get("audience_list"):
        raise ApplicationError("The uploaded list is empty.", code="required", field="audience_list")


@transaction.atomic
def campaign_create(
    *,
    project: Project,
    name: str,
    template: Template,
    connector: Connector | None = None,
    audience_kind: str = AudienceKind.EVERYONE,
    audience_segment: Segment | None = None,
    audience_tag: str = "",
    audience_list: list[str] | None = None,
    send_at: datetime | None = None,
    max_rate: int | None = None,
    initial_rate: int | None = None,
    category: str = "marketing",
) -> Campaign:
    values: dict[str, Any] = {
        "name": name,
        "template": template,
        "connector": connector,
        "audience_kind": audience_kind,
        "audience_segment": audience_segment,
        "audience_tag": audience_tag,
        "audience_list": audience_list or [],
        "send_at": send_at,
        "max_rate": max_rate,
        "initial_rate": initial_rate,
        "category": category,
    }
    _validate_refs(project=project, values=values)
    campaign = Campaign.objects.create(project=project, channel=template.channel, **values)
    CampaignStats.objects.create(project=project, campaign=campaign)
    campaign_event(campaign, CampaignEvent.Kind.STATE, "Created as a draft.")
    return campaign


@transaction.atomic
def campaign_update(*, campaign: Campaign, **changes: Any) -> Campaign:
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.state not in EDITABLE_STATES:
        raise Conflict(
            f"A {campaign.state} campaign cannot be edited; only drafts and scheduled ones can.",
            code="campaign_not_editable",
        )
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise ApplicationError(f"Cannot change {', '.join(sorted(unknown))}.", code="invalid")
    values = {name: getattr(campaign, name) for name in EDITABLE_FIELDS} | changes
    _validate_refs(project=campaign.project, values=values)
    for name, value in changes.items():
        setattr(campaign, name, value)
    if "template" in changes:
        campaign.channel = changes["template"].channel
        campaign.template_version = None
    campaign.save()
    return campaign


@transaction.atomic
def campaign_delete(*, campaign: Campaign) -> None:
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if campaign.state in (CampaignState.RUNNING, CampaignState.PAUSED):
        raise Conflict("Cancel the campaign before deleting it.", code="campaign_active")
    campaign.delete()


SETTINGS_FIELDS = (
    "bounce_threshold",
    "complaint_threshold",
    "window_seconds",
    "min_sample",
    "min_rate",
    "max_rate",
    "initial_rate",
    "increase_step",
    "decrease_factor",
)


@transaction.atomic
def campaign_settings_update(*, project: Project, **values: Any) -> CampaignSettings:
    """Validated in range (model validators); nothing is saved when any value is wrong."""
    unknown = set(values) - set(SETTINGS_FIELDS)
    if unknown:
        raise ApplicationError(f"Unknown setting {sorted(unknown)[0]!r}.", code="invalid", field=sorted(unknown)[0])
    row = CampaignSettings.objects.select_for_update().filter(project=project).first() or CampaignSettings(
        project=project
    )
    for name, value in values.items():
        setattr(row, name, value)
    try:
        row.full_clean(exclude=["project"])
    except DjangoValidationError as error:
        name, messages = next(iter(error.message_dict.items()))
        raise ApplicationError(messages[0], code="out_of_range", field=name) from None
    if row.min_rate > row.max_rate:
        raise ApplicationError("The minimum rate is above the maximum rate.", code="out_of_range", field="min_rate")
    row.save()
    return row
