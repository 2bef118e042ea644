"""The one-click unsubscribe endpoint (RFC 8058): /u/<token>, no login.

GET shows a confirmation button (mail scanners prefetch links, so GET changes nothing);
POST — from that button or from the mailbox provider's one-click request — adds the
address to the project's suppression list, idempotently.
"""

from __future__ import annotations

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt

from apps.campaigns.models import Campaign
from apps.campaigns.unsubscribe import UnsubscribeClaim, UnsubscribeTokenError, unsubscribe_token_read
from apps.delivery.services import suppression_add
from apps.projects.models import Project


def unsubscribe_claim(token: str) -> UnsubscribeClaim:
    claim = unsubscribe_token_read(token)
    if not Campaign.objects.for_project(claim.project_id).filter(pk=claim.campaign_id).exists():
        raise UnsubscribeTokenError("unknown", "This unsubscribe link does not belong to any campaign of this sender.")
    return claim


@transaction.atomic
def unsubscribe_apply(*, token: str) -> tuple[UnsubscribeClaim, bool]:
    claim = unsubscribe_claim(token)
    project = Project.objects.get(pk=claim.project_id)
    added = suppression_add(
        project=project,
        channel=claim.channel,
        address=claim.address,
        reason="unsubscribe",
        source=f"campaign:{claim.campaign_id} one-click",
    )
    return claim, added


@csrf_exempt
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        if request.method == "POST":
            claim, _ = unsubscribe_apply(token=token)
            return render(request, "campaigns/unsubscribe.html", {"done": True, "address": claim.address})
        if request.method != "GET":
            return HttpResponse(status=405, headers={"Allow": "GET, POST"})
        claim = unsubscribe_claim(token)
    except UnsubscribeTokenError as error:
        return render(request, "campaigns/unsubscribe.html", {"error": error.message}, status=400)
    return render(request, "campaigns/unsubscribe.html", {"done": False, "address": claim.address})
