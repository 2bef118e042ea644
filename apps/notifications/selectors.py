"""Reads for the publish side: one notification with its whole story, and the explorer."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from apps.core.errors import NotFound
from apps.delivery.models import Delivery
from apps.notifications.models import Notification
from apps.projects.models import Project


def notification_get(project: Project, notification_id: int | str) -> Notification:
    notification = (
        Notification.objects.for_project(project).select_related("outbox_event").filter(pk=notification_id).first()
        if str(notification_id).isdigit()
        else None
    )
    if notification is None:
        raise NotFound(f"There is no notification {notification_id} in this project.")
    return notification


def notification_deliveries(project: Project, notification: Notification) -> list[Delivery]:
    return list(
        Delivery.objects.for_project(project)
        .filter(origin_kind="notification", origin_id=str(notification.pk))
        .order_by("id")
    )


def notification_search(
    project: Project,
    *,
    notification_id: int | None = None,
    subscriber: str = "",
    state: str = "",
    channel: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[Notification]:
    """The explorer's filters. ``state`` is a delivery state (queued, sent, failed…) or
    a notification state (accepted, routed)."""
    notifications = Notification.objects.for_project(project).order_by("-created_at", "-id")
    if notification_id is not None:
        notifications = notifications.filter(pk=notification_id)
    if subscriber:
        notifications = notifications.filter(recipients__contains=[{"subscriber": subscriber}])
    if channel:
        notifications = notifications.filter(channels__contains=[channel])
    if since:
        notifications = notifications.filter(created_at__gte=since)
    if until:
        notifications = notifications.filter(created_at__lt=until)
    if state in Notification.State.values:
        notifications = notifications.filter(state=state)
    elif state:
        deliveries = Delivery.objects.for_project(project).filter(origin_kind="notification", state=state)
        if channel:
            deliveries = deliveries.filter(channel=channel)
        origin_ids = [int(i) for i in deliveries.values_list("origin_id", flat=True)[:5000] if i.isdigit()]
        notifications = notifications.filter(pk__in=origin_ids)
    return notifications
