"""One subscriber's messages across channels and origins, for console pages.

The subscriber page includes ``delivery/_subscriber_timeline.html`` with the context
this returns; the same include backs the standalone timeline page here.
"""

from __future__ import annotations

from typing import Any

from apps.delivery.models import Delivery


def subscriber_timeline(project: Any, subscriber: Any, limit: int = 50) -> dict[str, Any]:
    deliveries = list(
        Delivery.objects.for_project(project)
        .filter(subscriber_id=subscriber.pk)
        .select_related("template_version__template")
        .order_by("-id")[:limit]
    )
    return {"timeline_subscriber": subscriber, "timeline": deliveries}
