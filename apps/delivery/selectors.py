"""Reads of the delivery ledger that other apps' pages need."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apps.delivery.dispatch.sent_content import sent_content_unpack
from apps.delivery.models import SentContent
from apps.projects.models import Project


def sent_content_by_delivery(project: Project, delivery_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The content each of these deliveries went out with, where it is still kept. Only
    this project's rows: another project's delivery id finds nothing."""
    ids = list(delivery_ids)
    if not ids:
        return {}
    rows = (
        SentContent.objects.filter(project=project, delivery_id__in=ids)
        .order_by("delivery_id", "id")
        .values_list("delivery_id", "content")
    )
    # A delivery is recorded as sent once; should it ever hold two rows, the later one wins.
    return {delivery_id: sent_content_unpack(content) for delivery_id, content in rows}
