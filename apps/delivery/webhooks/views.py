"""The receipt webhook endpoint: one stable URL per connector and provider.

Verification uses the connector's own secrets; a refused request changes nothing.
The connector decides the project, so a verified receipt can only ever touch that
project's deliveries (``receipt_ingest`` matches within the project).
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from apps.core.problems import problem_response
from apps.delivery.channels.base import ReceiptEvent
from apps.delivery.models import Connector
from apps.delivery.services import receipt_ingest

from . import email, twilio, whatsapp  # noqa: F401  (parsers register on import)
from .base import WebhookRefused, mark_seen, receipt_parsers, request_fingerprint, seen_before

logger = logging.getLogger(__name__)


def _serialise(event: ReceiptEvent) -> dict[str, Any]:
    data = asdict(event)
    data["status"] = str(event.status)
    data["occurred_at"] = event.occurred_at.isoformat() if event.occurred_at else None
    data["raw"] = {key: value for key, value in dict(event.raw).items() if isinstance(value, (str, int, float, bool))}
    return data


def _retry_pending_later(connector: Connector, events: list[ReceiptEvent]) -> None:
    # The receipt outran the recording of the send; the delivery app's receipt task
    # re-ingests it a little later (the same path its dry-run receipts take).
    from apps.delivery.tasks import dryrun_receipts

    payload = [_serialise(event) for event in events]
    transaction.on_commit(
        lambda: dryrun_receipts.apply_async(args=[connector.project_id, connector.pk, payload, 1], countdown=1)
    )


@csrf_exempt
def receipt_webhook(request: HttpRequest, connector_id: int, provider: str) -> HttpResponse:
    connector = Connector.objects.filter(pk=connector_id, provider=provider).first()
    if connector is None:
        return problem_response(404, "not_found", "No such webhook.")
    key = f"{connector.channel}:{provider}"
    if request.method == "HEAD":
        return HttpResponse()  # some providers probe the URL when it is configured
    if request.method == "GET" and key == "whatsapp:cloudapi":
        try:
            return HttpResponse(whatsapp.verify_subscription(request, connector), content_type="text/plain")
        except WebhookRefused as exc:
            return problem_response(exc.status, exc.code, str(exc))
    if request.method != "POST":
        return problem_response(405, "method_not_allowed", "Receipts are POSTed.", headers={"Allow": "POST"})
    if key not in receipt_parsers:
        return problem_response(404, "not_found", "This provider sends no receipts.")
    fingerprint = request_fingerprint(connector.pk, request)
    if seen_before(fingerprint):
        return problem_response(409, "webhook_replayed", "This exact request was already received.")
    try:
        events = receipt_parsers.get(key)(request, connector)
    except WebhookRefused as exc:
        logger.warning("receipt webhook refused connector=%s provider=%s: %s", connector.pk, provider, exc)
        return problem_response(exc.status, exc.code, str(exc))
    result = receipt_ingest(project_id=connector.project_id, events=events, connector_id=connector.pk)
    if result.pending:
        _retry_pending_later(connector, result.pending)
    mark_seen(fingerprint)
    return JsonResponse(
        {
            "recorded": result.recorded,
            "duplicates": result.duplicates,
            "unmatched": result.unmatched,
            "pending": len(result.pending),
        }
    )
