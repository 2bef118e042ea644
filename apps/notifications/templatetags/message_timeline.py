"""``{% subscriber_messages subscriber as timeline %}``: the deliveries to one subscriber,
newest first, for the subscriber page's timeline include."""

from __future__ import annotations

from typing import Any

from django import template

from apps.delivery.console.timeline import subscriber_timeline

register = template.Library()


@register.simple_tag
def subscriber_messages(subscriber: Any, limit: int = 50) -> list[Any]:
    if subscriber is None or not getattr(subscriber, "pk", None):
        return []
    return subscriber_timeline(subscriber.project_id, subscriber, limit=limit)["timeline"]
