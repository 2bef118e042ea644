"""Driving campaigns in tests the way beat would: the same control functions, polled."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction

from apps.campaigns.control import control_tick
from apps.campaigns.ledger import ledger_counts
from apps.campaigns.models import Campaign, CampaignStats
from apps.campaigns.reconcile import campaigns_reap, campaigns_reconcile
from apps.delivery.dispatch.runner import sweep
from apps.delivery.models import Delivery


def beat_once() -> None:
    control_tick()
    campaigns_reap()
    sweep()
    campaigns_reconcile()


def run_until(predicate: Callable[[], Any], *, timeout: float = 60, interval: float = 0.5, message: Any = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        beat_once()
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError((message() if callable(message) else message) or f"condition not met within {timeout}s")


def state_of(campaign: Campaign) -> str:
    return Campaign.objects.values_list("state", flat=True).get(pk=campaign.pk)


def rows(campaign: Campaign) -> Any:
    return Delivery.objects.filter(project_id=campaign.project_id, origin_kind="campaign", origin_id=str(campaign.pk))


def assert_counters_equal_rows(campaign: Campaign) -> None:
    # One snapshot for both reads: receipts keep arriving while the test looks.
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        counts = ledger_counts(project_id=campaign.project_id, campaign_id=campaign.pk).as_dict()
        stats = CampaignStats.objects.get(campaign=campaign)
    for name in ("sent", "delivered", "bounced", "complained", "dead", "suppressed", "pending"):
        assert getattr(stats, name) == counts[name], (name, getattr(stats, name), counts[name])
