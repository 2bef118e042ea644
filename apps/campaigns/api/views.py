"""Campaigns API: reads need ``read``, changes and the controls ``campaigns:write``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.campaigns import lifecycle, services
from apps.campaigns.api.schema import CampaignActionOut, CampaignListOut, CampaignOut, CampaignPauseInput
from apps.campaigns.api.serializers import CampaignInput, CampaignSettingsInput
from apps.campaigns.models import Campaign
from apps.campaigns.selectors import campaign_get, campaign_list, campaign_progress, campaign_settings
from apps.core.api_schema import problem_responses
from apps.governance.api.base import ProjectAPIView
from apps.governance.scopes import CAMPAIGNS_WRITE, READ


def campaign_out(campaign: Campaign, *, detail: bool = True) -> dict[str, Any]:
    body = {
        "id": campaign.pk,
        "name": campaign.name,
        "state": campaign.state,
        "channel": campaign.channel,
        "template": campaign.template.key,
        "template_version": campaign.template_version.number if campaign.template_version_id else None,
        "connector": campaign.connector_id,
        "audience": {
            "kind": campaign.audience_kind,
            "segment": campaign.audience_segment_id,
            "tag": campaign.audience_tag,
            "list_size": len(campaign.audience_list or []),
        },
        "send_at": campaign.send_at.isoformat() if campaign.send_at else None,
        "max_rate": campaign.max_rate,
        "initial_rate": campaign.initial_rate,
        "created_at": campaign.created_at.isoformat(),
    }
    progress = campaign_progress(campaign, events=15 if detail else 0, samples=180 if detail else 0)
    body.update({k: v for k, v in progress.items() if k not in body})
    if not detail:
        body.pop("events")
        body.pop("throughput")
    return body


# Every GET of the API needs ``read`` and only that (tests/test_read_scope.py holds it).
READ_OR_WRITE = {"GET": READ, "*": CAMPAIGNS_WRITE}


class CampaignsView(ProjectAPIView):
    required_scopes = READ_OR_WRITE

    @extend_schema(
        operation_id="campaigns_list",
        tags=["campaigns"],
        parameters=[
            OpenApiParameter("q", str, description="Search by name."),
            OpenApiParameter("state", str, description="Only campaigns in this state."),
        ],
        responses=CampaignListOut,
    )
    def get(self, request: Request) -> Response:
        qs = campaign_list(
            self.project, search=request.query_params.get("q", ""), state=request.query_params.get("state", "")
        )
        return Response({"results": [campaign_out(c, detail=False) for c in qs[:200]]})

    @extend_schema(
        operation_id="campaign_create", tags=["campaigns"], request=CampaignInput, responses={201: CampaignOut}
    )
    def post(self, request: Request) -> Response:
        data = CampaignInput(data=request.data)
        data.is_valid(raise_exception=True)
        campaign = services.campaign_create(project=self.project, **data.resolve(self.project))
        return Response(campaign_out(campaign), status=201)


class CampaignView(ProjectAPIView):
    required_scopes = READ_OR_WRITE

    @extend_schema(operation_id="campaign_get", tags=["campaigns"], responses=CampaignOut)
    def get(self, request: Request, campaign_id: int) -> Response:
        return Response(campaign_out(campaign_get(self.project, campaign_id)))

    @extend_schema(
        operation_id="campaign_update",
        tags=["campaigns"],
        request=CampaignInput,
        responses={200: CampaignOut, **problem_responses(409)},
    )
    def patch(self, request: Request, campaign_id: int) -> Response:
        campaign = campaign_get(self.project, campaign_id)
        data = CampaignInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        campaign = services.campaign_update(campaign=campaign, **data.resolve(self.project))
        return Response(campaign_out(campaign_get(self.project, campaign.pk)))

    @extend_schema(operation_id="campaign_delete", tags=["campaigns"], responses={204: None, **problem_responses(409)})
    def delete(self, request: Request, campaign_id: int) -> Response:
        services.campaign_delete(campaign=campaign_get(self.project, campaign_id))
        return Response(status=204)


class CampaignActionView(ProjectAPIView):
    required_scope = CAMPAIGNS_WRITE
    action = ""

    @extend_schema(
        tags=["campaigns"],
        request=CampaignPauseInput,
        responses={202: CampaignActionOut},
        description="start, pause (optional reason), resume, cancel, or retry dead letters only.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        # Every control reads the documented body, so a malformed one is refused (400, 422)
        # rather than ignored by the actions that take no reason.
        campaign = campaign_get(self.project, campaign_id)
        body = CampaignPauseInput(data=request.data)
        body.is_valid(raise_exception=True)
        extra: dict[str, Any] = {}
        if self.action == "start":
            lifecycle.campaign_start(campaign=campaign)
        elif self.action == "pause":
            lifecycle.campaign_pause(campaign=campaign, reason=body.validated_data.get("reason") or "Paused by hand.")
        elif self.action == "resume":
            lifecycle.campaign_resume(campaign=campaign)
        elif self.action == "cancel":
            lifecycle.campaign_cancel(campaign=campaign)
        elif self.action == "retry":
            extra["retried"] = lifecycle.campaign_retry(campaign=campaign)
        return Response(campaign_out(campaign_get(self.project, campaign_id)) | extra, status=202)


class CampaignSettingsView(ProjectAPIView):
    required_scopes = READ_OR_WRITE

    @extend_schema(operation_id="campaign_settings_get", tags=["campaigns"], responses=CampaignSettingsInput)
    def get(self, request: Request) -> Response:
        return Response(CampaignSettingsInput(campaign_settings(self.project)).data)

    @extend_schema(
        operation_id="campaign_settings_update",
        tags=["campaigns"],
        request=CampaignSettingsInput,
        responses=CampaignSettingsInput,
    )
    def patch(self, request: Request) -> Response:
        data = CampaignSettingsInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        row = services.campaign_settings_update(project=self.project, **data.validated_data)
        return Response(CampaignSettingsInput(row).data)
