"""Console pages: campaign list (search, live status), new campaign, the live campaign
console (server-sent events), controls, and the project's breaker/rate settings."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.campaigns import lifecycle, services
from apps.campaigns.console.controls import campaign_controls, clock, refusal
from apps.campaigns.console.forms import CampaignForm, CampaignSettingsForm
from apps.campaigns.live import event_stream
from apps.campaigns.selectors import (
    campaign_counters,
    campaign_get,
    campaign_list,
    campaign_progress,
    campaign_settings,
)
from apps.console.access import console_page, current_project
from apps.core.errors import ApplicationError

SECTION = {"section": "campaigns"}


@console_page
def campaigns(request: HttpRequest) -> HttpResponse:
    search = request.GET.get("q", "").strip()
    rows = list(campaign_list(request.project, search=search)[:200])  # type: ignore[attr-defined]
    items = [{"campaign": c, "counters": campaign_counters(c)} for c in rows]
    return render(request, "campaigns/list.html", {**SECTION, "items": items, "q": search})


@console_page
def campaigns_status(request: HttpRequest) -> JsonResponse:
    """Live status for the list page: a small JSON the page polls."""
    rows = campaign_list(request.project, search=request.GET.get("q", "").strip())[:200]  # type: ignore[attr-defined]
    return JsonResponse({"campaigns": [{"id": c.pk, "state": c.state, **campaign_counters(c)} for c in rows]})


@console_page
def campaign_new(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    form = CampaignForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        try:
            campaign = services.campaign_create(project=project, **form.service_kwargs())
        except ApplicationError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, f"Campaign {campaign.name!r} saved as a draft.")
            return redirect("campaigns_console:detail", campaign_id=campaign.pk)
    return render(request, "campaigns/form.html", {**SECTION, "form": form})


STATE_TAG = "campaign-state-"


def _banners(request: HttpRequest, state: str) -> list[Any]:
    """The flashed messages still true of the campaign. An outcome names the state it left
    the campaign in; once the campaign has moved on (the breaker paused it right after
    Start) that banner would be a lie, so it is dropped."""
    kept = []
    for message in messages.get_messages(request):
        tags = message.extra_tags.split() if message.extra_tags else []
        if any(tag.startswith(STATE_TAG) and tag != STATE_TAG + state for tag in tags):
            continue
        kept.append(message)
    return kept


@console_page
def campaign_detail(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = _get_or_404(request, campaign_id)
    progress = campaign_progress(campaign)
    return render(
        request,
        "campaigns/detail.html",
        {
            **SECTION,
            "campaign": campaign,
            "progress": progress,
            "controls": campaign_controls(campaign, progress["counters"]),
            "messages": _banners(request, campaign.state),
        },
    )


def _outcome(action: str, campaign: Any, result: Any) -> str:
    if action == "start" and campaign.state == "scheduled":
        return f"Scheduled: sending starts at {clock(campaign.send_at)}."
    if action == "start":
        return f"Started: sending to {campaign.total_recipients} recipients."
    if action == "retry":
        return f"Retry: {result} dead letters queued again."
    return {"pause": "Paused.", "resume": "Resumed.", "cancel": "Cancelled."}[action]


ACTIONS = {
    "start": lambda c: lifecycle.campaign_start(campaign=c),
    "pause": lambda c: lifecycle.campaign_pause(campaign=c),
    "resume": lambda c: lifecycle.campaign_resume(campaign=c),
    "cancel": lambda c: lifecycle.campaign_cancel(campaign=c),
    "retry": lambda c: lifecycle.campaign_retry(campaign=c),
}


@require_POST
@console_page
def campaign_action(request: HttpRequest, campaign_id: int, action: str) -> HttpResponse:
    campaign = _get_or_404(request, campaign_id)
    if action not in ACTIONS:
        messages.error(request, f"Unknown action {action!r}.")
    elif action not in campaign_controls(campaign, campaign_counters(campaign)):
        messages.error(request, refusal(campaign, action))
    else:
        try:
            result = ACTIONS[action](campaign)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            campaign.refresh_from_db()
            messages.success(request, _outcome(action, campaign, result), extra_tags=STATE_TAG + campaign.state)
    return redirect("campaigns_console:detail", campaign_id=campaign.pk)


@console_page
def campaign_settings_page(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    current = campaign_settings(project)
    form = CampaignSettingsForm(request.POST or None, instance=current)
    if request.method == "POST" and form.is_valid():
        try:
            services.campaign_settings_update(
                project=project, **{name: form.cleaned_data[name] for name in form.Meta.fields}
            )
        except ApplicationError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, "Campaign settings saved.")
            return redirect("campaigns_console:settings")
    return render(request, "campaigns/settings.html", {**SECTION, "form": form})


def _get_or_404(request: HttpRequest, campaign_id: int) -> Any:
    from django.http import Http404

    try:
        return campaign_get(request.project, campaign_id)  # type: ignore[attr-defined]
    except ApplicationError:
        raise Http404("No such campaign in this project.") from None


def _stream_target(request: HttpRequest, campaign_id: int) -> tuple[int, int] | None:
    if not request.user.is_authenticated:
        return None
    project, membership = current_project(request)
    if project is None or membership is None:
        return None
    try:
        return project.pk, campaign_get(project, campaign_id).pk
    except ApplicationError:
        return None


async def campaign_stream(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The campaign page's live feed (text/event-stream), for its signed-in members."""
    await request.auser()
    target = await sync_to_async(_stream_target)(request, campaign_id)
    if target is None:
        return HttpResponse("Not found.", status=404, content_type="text/plain")
    return event_stream(request, project_id=target[0], campaign_id=target[1])
