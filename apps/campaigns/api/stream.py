"""GET /api/v1/campaigns/{id}/stream: the campaign's figures as server-sent events."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse

from apps.campaigns.live import event_stream
from apps.campaigns.selectors import campaign_get
from apps.core.errors import ApplicationError
from apps.core.problems import problem_response
from apps.governance.authentication import KeyRejected, resolve_api_key
from apps.governance.scopes import READ


def _authorise(request: HttpRequest, campaign_id: int) -> tuple[int, int] | HttpResponse:
    try:
        key = resolve_api_key(request)
    except KeyRejected as error:
        return problem_response(401, error.problem_code, str(error.detail))
    if key is None:
        return problem_response(401, "missing_credentials", "Send an API key as 'Authorization: Bearer <key>'.")
    if READ not in key.effective_scopes():
        return problem_response(403, "missing_scope", f"This {key.kind} key lacks the scope {READ!r}.")
    try:
        campaign = campaign_get(key.project, campaign_id)
    except ApplicationError as error:
        return problem_response(error.status, error.code, error.message)
    return key.project_id, campaign.pk


async def campaign_api_stream(request: HttpRequest, campaign_id: int) -> HttpResponse:
    found = await sync_to_async(_authorise)(request, campaign_id)
    if isinstance(found, HttpResponse):
        return found
    project_id, campaign_pk = found
    return event_stream(request, project_id=project_id, campaign_id=campaign_pk)
