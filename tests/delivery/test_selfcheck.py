"""``manage.py delivery_selfcheck``: a few dry-run sends through the real path, each sent once."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from apps.delivery.dispatch.prepare import _senders
from tests.delivery.conftest import redis_clear

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh():
    _senders.items.clear()
    redis_clear()


def _selfcheck(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("delivery_selfcheck", *args, stdout=out)
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_selfcheck_enqueues_claims_sends_and_records_each_delivery_once() -> None:
    report = _selfcheck("--count", "7")

    assert report["vendor"] == "postgresql"
    assert [d["state"] for d in report["deliveries"]] == ["sent"] * 7
    assert [d["sends"] for d in report["deliveries"]] == [1] * 7
    assert [d["attempts"] for d in report["deliveries"]] == [1] * 7
    assert report["all_sent_once"] is True


def test_selfcheck_on_the_bulk_lane_drains_over_several_claims(settings) -> None:
    settings.TIDINGS_DISPATCH_BATCH_SIZE = 3
    settings.TIDINGS_DISPATCH_BULK_BATCH_SIZE = 3

    report = _selfcheck("--count", "8", "--lane", "bulk")

    assert len(report["deliveries"]) == 8
    assert report["all_sent_once"] is True, report
