"""Broadcasts: one template to a segment, a tag or a list of subscribers, on the bulk lane.

The API stores the broadcast and answers; a task fans it out with one set-based
INSERT … SELECT per channel (``deliveries_enqueue_for_subscribers``), so a segment of a
million costs a handful of statements, not a million round trips. The keys
(``broadcast:<id>:<channel>:<subscriber>``) make a repeated fan-out create nothing new.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction

from apps.core.errors import ApplicationError, NotFound
from apps.delivery.models import Delivery
from apps.delivery.services import deliveries_enqueue_for_subscribers
from apps.notifications.models import Broadcast
from apps.notifications.rendering_check import strict_check
from apps.notifications.services import send_at_check, template_for_channels
from apps.projects.models import Project
from apps.subscribers.models import Segment, Subscriber, Tag

# Channels the set-based insert can address (a subscriber column, or their devices).
BROADCAST_CHANNELS = ("email", "sms", "whatsapp", "push")

_AUDIENCE_SQL = {
    Broadcast.Audience.SEGMENT: (
        "SELECT subscriber_id FROM subscribers_segmentmembership WHERE project_id = %s AND segment_id = %s"
    ),
    Broadcast.Audience.TAG: (
        "SELECT st.subscriber_id FROM subscribers_subscribertag st "
        "JOIN subscribers_tag t ON t.id = st.tag_id WHERE t.project_id = %s AND t.name = %s"
    ),
    Broadcast.Audience.LIST: "SELECT id FROM subscribers_subscriber WHERE project_id = %s AND id = ANY(%s)",
}


def broadcast_create(
    *,
    project: Project,
    template: str,
    channels: list[str],
    segment: int | None = None,
    tag: str | None = None,
    subscribers: list[str] | None = None,
    data: dict[str, Any] | None = None,
    send_at: datetime | None = None,
) -> Broadcast:
    data = data or {}
    unsupported = [c for c in channels if c not in BROADCAST_CHANNELS]
    if unsupported:
        raise ApplicationError(
            f"Broadcasts go by {', '.join(BROADCAST_CHANNELS)}; {', '.join(unsupported)} is not supported.",
            code="channel_not_broadcastable",
            field="channels",
        )
    resolved = template_for_channels(project=project, template=template, channels=channels)
    send_at = send_at_check(send_at)
    if resolved.strict:
        strict_check(resolved, channels=channels, data=data)
    subscriber_ids: list[int] = []
    if segment is not None:
        if not Segment.objects.for_project(project).filter(pk=segment).exists():
            raise NotFound(f"There is no segment {segment} in this project.", field="segment")
        kind, ref = Broadcast.Audience.SEGMENT, str(segment)
    elif tag:
        if not Tag.objects.for_project(project).filter(name=tag).exists():
            raise ApplicationError(f"There is no tag {tag!r} in this project.", code="unknown_tag", field="tag")
        kind, ref = Broadcast.Audience.TAG, tag
    else:
        wanted = list(dict.fromkeys(subscribers or []))
        found = dict(
            Subscriber.objects.for_project(project)
            .filter(external_id__in=wanted, erased_at__isnull=True)
            .values_list("external_id", "id")
        )
        missing = [external_id for external_id in wanted if external_id not in found]
        if missing:
            raise ApplicationError(
                f"There is no subscriber with external id {missing[0]!r} in this project.",
                code="unknown_subscriber",
                field=f"subscribers[{(subscribers or []).index(missing[0])}]",
            )
        kind, ref, subscriber_ids = Broadcast.Audience.LIST, "", [found[e] for e in wanted]

    with transaction.atomic():
        broadcast = Broadcast.objects.create(
            project=project,
            template_key=resolved.key,
            template_version_id=resolved.version_id,
            template_number=resolved.number,
            channels=channels,
            audience_kind=kind,
            audience_ref=ref,
            subscriber_ids=subscriber_ids,
            data=data,
            send_at=send_at,
        )
        transaction.on_commit(lambda: _queue_fanout(project.pk, broadcast.pk))
    return broadcast


def _queue_fanout(project_id: int, broadcast_id: int) -> None:
    from apps.notifications.tasks import broadcast_fanout

    broadcast_fanout.apply_async(args=[project_id, broadcast_id], queue="bulk")


def broadcast_enqueue(*, project: Project, broadcast_id: int) -> int:
    """Fan a broadcast out into deliveries; safe to run again (stable keys)."""
    with transaction.atomic():
        broadcast = (
            Broadcast.objects.for_project(project).select_for_update(skip_locked=True).filter(pk=broadcast_id).first()
        )
        if broadcast is None or broadcast.state == Broadcast.State.ENQUEUED:
            return 0
        sql = _AUDIENCE_SQL[broadcast.audience_kind]
        audience: Any = broadcast.subscriber_ids if broadcast.audience_kind == Broadcast.Audience.LIST else None
        if broadcast.audience_kind == Broadcast.Audience.SEGMENT:
            audience = int(broadcast.audience_ref)
        elif broadcast.audience_kind == Broadcast.Audience.TAG:
            audience = broadcast.audience_ref
        total = 0
        for channel in broadcast.channels:
            count = deliveries_enqueue_for_subscribers(
                project=project,
                subscriber_ids_sql=sql,
                params=[project.pk, audience],
                channel=channel,
                lane="bulk",
                origin_kind="broadcast",
                origin_id=str(broadcast.pk),
                template_version_id=broadcast.template_version_id,
                key_prefix=f"broadcast:{broadcast.pk}:{channel}",
                due_at=broadcast.send_at,
            )
            broadcast.enqueued[channel] = count
            total += count
        if broadcast.data:
            # The set-based insert stores an empty context; the rows are invisible until
            # this transaction commits, so the dispatcher only ever sees them with data.
            Delivery.objects.for_project(project).filter(origin_kind="broadcast", origin_id=str(broadcast.pk)).update(
                context=broadcast.data
            )
        broadcast.state = Broadcast.State.ENQUEUED
        broadcast.save(update_fields=["state", "enqueued"])
    return total
