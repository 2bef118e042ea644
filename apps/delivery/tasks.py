"""Thin Celery tasks of the delivery app: dispatcher wake-ups, the sweeper, dry-run receipts,
sent-content retention."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from apps.delivery.channels.base import ReceiptEvent, ReceiptStatus

RECEIPT_RETRIES = 10


@shared_task(name="delivery.dryrun_receipts", ignore_result=True, acks_late=True)
def dryrun_receipts(project_id: int, connector_id: int | None, events: list[dict[str, Any]], tries: int = 0) -> int:
    """Feed simulated provider receipts through the same ingest as real webhooks."""
    from apps.delivery.services import receipt_ingest

    parsed = [ReceiptEvent(**{**e, "status": ReceiptStatus(e["status"])}) for e in events]
    result = receipt_ingest(project_id=project_id, events=parsed, connector_id=connector_id)
    if result.pending and tries < RECEIPT_RETRIES:
        # The send is still being recorded: the receipt outran it, as real webhooks can.
        pending = [e for e in events if e["provider_event_id"] in {p.provider_event_id for p in result.pending}]
        dryrun_receipts.apply_async(args=[project_id, connector_id, pending, tries + 1], countdown=1 + tries)
    return result.recorded


@shared_task(name="delivery.dispatch_lane", ignore_result=True, acks_late=True)
def dispatch_lane(lane: str) -> dict[str, int]:
    """A wake-up: drain ``lane`` (and the lanes above it, 3:2:1). Safe to run any number of times."""
    from apps.delivery.dispatch import dispatch_lane_run

    return dispatch_lane_run(lane)


@shared_task(name="delivery.sweep", ignore_result=True)
def sweep() -> dict[str, int]:
    """Beat: reclaim expired claims, release due scheduled sends, re-wake lanes with due work."""
    from apps.delivery.dispatch import sweep as run_sweep

    return run_sweep()


@shared_task(name="delivery.sent_content_prune", ignore_result=True)
def sent_content_prune() -> int:
    """Beat: drop sent-message snapshots past their retention."""
    from apps.delivery.services import sent_content_prune as prune

    return prune()
