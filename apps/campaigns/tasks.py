"""Thin Celery tasks: ids in, one service call, idempotent."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from apps.campaigns import control, fanout, lifecycle, reconcile


@shared_task(
    name="campaigns.fanout_chunk",
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=1,
    max_retries=8,
)
def campaign_fanout_chunk(project_id: int, campaign_id: int, chunk_id: int) -> int:
    return fanout.campaign_chunk_fan_out(project_id=project_id, campaign_id=campaign_id, chunk_id=chunk_id)


@shared_task(name="campaigns.control_tick", ignore_result=True)
def campaigns_control_tick() -> None:
    control.control_tick()


@shared_task(name="campaigns.reaper", ignore_result=True)
def campaigns_reaper() -> None:
    reconcile.campaigns_reap()


@shared_task(name="campaigns.reconciler", ignore_result=True)
def campaigns_reconciler() -> None:
    reconcile.campaigns_reconcile()


@shared_task(name="campaigns.start_due", ignore_result=True)
def campaigns_start_due() -> None:
    lifecycle.campaign_start_due()
