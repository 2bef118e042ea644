"""Push devices: a token belongs to at most one subscriber per project."""

from __future__ import annotations

from django.db import connection, transaction

from apps.core.errors import ApplicationError, NotFound
from apps.projects.models import Project
from apps.subscribers.models import Device, Subscriber


@transaction.atomic
def device_register(*, project: Project, subscriber: Subscriber, platform: str, token: str) -> Device:
    """Register (or re-register) a token; a token seen on another subscriber of the same
    project moves to this one. Another project's identical token is a separate row."""
    if platform not in Device.Platform.values:
        raise ApplicationError(
            f"platform must be one of {', '.join(Device.Platform.values)}.", code="invalid_platform", field="platform"
        )
    if not isinstance(token, str) or not token.strip() or len(token) > 4096:
        raise ApplicationError("token must be a non-empty string of at most 4096 characters.", field="token")
    if subscriber.project_id != project.pk:
        raise NotFound("Subscriber not found.", field="subscriber")
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO subscribers_device (project_id, subscriber_id, platform, token, active, last_seen_at,"
            " deactivated_reason, created_at) VALUES (%s, %s, %s, %s, true, now(), '', now())"
            " ON CONFLICT (project_id, token) DO UPDATE SET subscriber_id = EXCLUDED.subscriber_id,"
            " platform = EXCLUDED.platform, active = true, last_seen_at = now(), deactivated_reason = ''"
            " RETURNING id",
            [project.pk, subscriber.pk, platform, token],
        )
        device_id = cursor.fetchone()[0]
    return Device.objects.get(pk=device_id)


@transaction.atomic
def device_deactivate(*, project: Project, token: str, reason: str) -> None:
    """Push adapters call this for tokens the provider reports as unregistered."""
    Device.objects.for_project(project).filter(token=token).update(active=False, deactivated_reason=reason[:255])


@transaction.atomic
def device_delete(*, project: Project, token: str) -> None:
    deleted, _ = Device.objects.for_project(project).filter(token=token).delete()
    if not deleted:
        raise NotFound("No device with this token in this project.", field="token")
