"""Campaigns API: reads need ``read``, changes and the controls ``campaigns:write``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework.request import Request
from rest_framework.response import Response

from apps.campaigns import lifecycle, services
from apps.campaigns.api.schema import CampaignActionOut, CampaignListOut, CampaignOut, CampaignPauseInput
from apps.campaigns.api.serializers import CampaignInput, CampaignSettingsInput
from apps.campaigns.models import Campaign
from apps.campaigns.selectors import campaign_get, campaign_list, campaign_progress, campaign_settings
from apps.core.api_schema import problem_responses
from apps.governance.api.base import ProjectAPIView
from apps.governance.api.docs import described
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
        summary="List campaigns",
        description=described(
            "Up to 200 campaigns, newest first, with their counters; filter by name (`q`) or `state`.", READ
        ),
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
        operation_id="campaign_create",
        summary="Create a campaign",
        description=described(
            (
                "Creates a draft campaign: a template, a channel and an audience (everyone, a segment, "
                "a tag or an uploaded list), optionally a send time and rate limits. Nothing is sent "
                "until it is started. 422 names each invalid field (`template_not_found`, "
                "`segment_not_found`, ...)."
            ),
            CAMPAIGNS_WRITE,
        ),
        tags=["campaigns"],
        request=CampaignInput,
        responses={201: CampaignOut},
    )
    def post(self, request: Request) -> Response:
        data = CampaignInput(data=request.data)
        data.is_valid(raise_exception=True)
        campaign = services.campaign_create(project=self.project, **data.resolve(self.project))
        return Response(campaign_out(campaign), status=201)


class CampaignView(ProjectAPIView):
    required_scopes = READ_OR_WRITE

    @extend_schema(
        operation_id="campaign_get",
        summary="One campaign with live progress",
        description=described(
            (
                "The campaign, its counters, recent events and throughput samples. 404 for a campaign "
                "of another project."
            ),
            READ,
        ),
        tags=["campaigns"],
        responses=CampaignOut,
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        return Response(campaign_out(campaign_get(self.project, campaign_id)))

    @extend_schema(
        operation_id="campaign_update",
        summary="Change a draft or scheduled campaign",
        description=described(
            "Changes only the fields sent. 409 `campaign_not_editable` once the campaign has started.",
            CAMPAIGNS_WRITE,
        ),
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

    @extend_schema(
        operation_id="campaign_delete",
        summary="Delete a campaign",
        description=described(
            (
                "Deletes a campaign that is neither running nor paused. 409 `campaign_active` for a "
                "running or paused campaign: cancel it first."
            ),
            CAMPAIGNS_WRITE,
        ),
        tags=["campaigns"],
        responses={204: None, **problem_responses(409)},
    )
    def delete(self, request: Request, campaign_id: int) -> Response:
        services.campaign_delete(campaign=campaign_get(self.project, campaign_id))
        return Response(status=204)


class CampaignActionView(ProjectAPIView):
    required_scope = CAMPAIGNS_WRITE
    action = ""

    @extend_schema(tags=["campaigns"], request=CampaignPauseInput, responses={202: CampaignActionOut})
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


# What each control does, for its operation in the OpenAPI document.
CAMPAIGN_ACTIONS: dict[str, tuple[str, str]] = {
    "start": (
        "Start a campaign",
        "Starts sending to the audience (a campaign with a future `send_at` waits for it); the answer carries "
        "the counters. 409 `campaign_already_running`, `campaign_paused` (resume it instead), `campaign_finished` "
        "or `import_running`; 422 `template_draft`, `template_channel_missing`, `no_connector` or `no_recipients`.",
    ),
    "pause": (
        "Pause a running campaign",
        "Nothing new is claimed; batches already claimed finish and are recorded. The optional `reason` is "
        "shown with the campaign. 409 `not_running`.",
    ),
    "resume": (
        "Resume a paused campaign",
        "Puts back only what the pause parked: nobody already sent or in flight is sent again. "
        "409 `not_paused` or `campaign_completed`.",
    ),
    "cancel": (
        "Cancel a campaign",
        "Waiting deliveries become `cancelled` and stay in the ledger for audit. 409 `campaign_finished`.",
    ),
    "retry": (
        "Retry a campaign's dead letters",
        "Sends the campaign's dead letters round again; everything else is left as it is. `retried` counts "
        "them. 409 `nothing_to_retry`; 422 `no_dead_letters`.",
    ),
}


def campaign_action_view(action: str) -> type[CampaignActionView]:
    """One view class per control, so each operation carries its own description."""
    summary, text = CAMPAIGN_ACTIONS[action]
    view = type(f"Campaign{action.title()}View", (CampaignActionView,), {"action": action})
    return extend_schema_view(post=extend_schema(summary=summary, description=described(text, CAMPAIGNS_WRITE)))(view)


class CampaignSettingsView(ProjectAPIView):
    required_scopes = READ_OR_WRITE

    @extend_schema(
        operation_id="campaign_settings_get",
        summary="The project's campaign rate settings",
        description=described(
            (
                "The circuit-breaker thresholds (bounce and complaint rates over a window) and the "
                "send-rate bounds campaigns of this project run with."
            ),
            READ,
        ),
        tags=["campaigns"],
        responses=CampaignSettingsInput,
    )
    def get(self, request: Request) -> Response:
        return Response(CampaignSettingsInput(campaign_settings(self.project)).data)

    @extend_schema(
        operation_id="campaign_settings_update",
        summary="Change the project's campaign rate settings",
        description=described(
            (
                "Changes only the settings sent. 422 `out_of_range` for a value outside its bounds, or "
                "a minimum rate above the maximum."
            ),
            CAMPAIGNS_WRITE,
        ),
        tags=["campaigns"],
        request=CampaignSettingsInput,
        responses=CampaignSettingsInput,
    )
    def patch(self, request: Request) -> Response:
        data = CampaignSettingsInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        row = services.campaign_settings_update(project=self.project, **data.validated_data)
        return Response(CampaignSettingsInput(row).data)
