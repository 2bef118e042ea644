"""Subscriber reads. The first argument is always the project."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from apps.core.errors import NotFound
from apps.projects.models import Project
from apps.subscribers.models import (
    ChannelPreference,
    Device,
    ImportJob,
    Segment,
    SegmentMembership,
    Subscriber,
    SubscriberTag,
)


def _live(project: Project | int) -> QuerySet[Subscriber]:
    return Subscriber.objects.for_project(project).filter(merged_into__isnull=True, erased_at__isnull=True)


def subscriber_get(project: Project | int, external_id: str) -> Subscriber:
    """The identified subscriber with this external id (an alias resolves to its survivor)."""
    subscriber = Subscriber.objects.for_project(project).filter(external_id=external_id).first()
    if subscriber is not None and subscriber.merged_into_id:
        subscriber = Subscriber.objects.for_project(project).filter(pk=subscriber.merged_into_id).first()
    if subscriber is None or subscriber.erased_at is not None:
        raise NotFound(f"No subscriber with external id {external_id!r}.", field="external_id")
    return subscriber


def subscriber_by_anonymous_id(project: Project | int, anonymous_id: str) -> Subscriber:
    subscriber = Subscriber.objects.for_project(project).filter(anonymous_id=anonymous_id).first()
    if subscriber is not None and subscriber.merged_into_id:
        subscriber = Subscriber.objects.for_project(project).filter(pk=subscriber.merged_into_id).first()
    if subscriber is None or subscriber.erased_at is not None:
        raise NotFound(f"No subscriber with anonymous id {anonymous_id!r}.", field="anonymous_id")
    return subscriber


def subscriber_list(
    project: Project | int,
    *,
    tag: str | None = None,
    segment_id: int | None = None,
    email: str | None = None,
    search: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    after_id: int | None = None,
) -> QuerySet[Subscriber]:
    """Live subscribers, newest id last, for keyset (cursor) pagination by id."""
    qs = _live(project)
    if tag:
        qs = qs.filter(subscriber_tags__tag__name=tag)
    if segment_id is not None:
        qs = qs.filter(segment_memberships__segment_id=segment_id)
    if email:
        qs = qs.filter(email__iexact=email)
    if search:
        qs = qs.filter(Q(external_id__icontains=search) | Q(email__icontains=search) | Q(phone__icontains=search))
    if created_after:
        qs = qs.filter(created_at__gte=created_after)
    if created_before:
        qs = qs.filter(created_at__lt=created_before)
    if after_id is not None:
        qs = qs.filter(pk__gt=after_id)
    return qs.order_by("pk")


def subscriber_tag_names(project: Project | int, subscriber_ids: list[int]) -> dict[int, set[str]]:
    names: dict[int, set[str]] = defaultdict(set)
    rows = (
        SubscriberTag.objects.for_project(project)
        .filter(subscriber_id__in=subscriber_ids)
        .values_list("subscriber_id", "tag__name")
    )
    for sid, name in rows:
        names[sid].add(name)
    return dict(names)


def segment_get(project: Project | int, segment_id: int) -> Segment:
    segment = Segment.objects.for_project(project).filter(pk=segment_id).first()
    if segment is None:
        raise NotFound(f"No segment {segment_id}.", field="segment")
    return segment


def segment_list(project: Project | int) -> QuerySet[Segment]:
    return Segment.objects.for_project(project).order_by("name")


def segment_counts(project: Project | int) -> dict[int, int]:
    from django.db.models import Count

    rows = SegmentMembership.objects.for_project(project).values("segment_id").annotate(n=Count("id"))
    return {row["segment_id"]: row["n"] for row in rows}


def segment_subscriber_ids(project: Project | int, segment_id: int) -> QuerySet[Any]:
    """Materialised membership: no rule evaluation on read."""
    return (
        SegmentMembership.objects.for_project(project)
        .filter(segment_id=segment_id)
        .order_by("subscriber_id")
        .values_list("subscriber_id", flat=True)
    )


def subscriber_segments(project: Project | int, subscriber: Subscriber) -> QuerySet[Segment]:
    return Segment.objects.for_project(project).filter(memberships__subscriber=subscriber).order_by("name")


def subscribers_with_tag(project: Project | int, tag_name: str) -> QuerySet[Subscriber]:
    return _live(project).filter(subscriber_tags__tag__name=tag_name).order_by("pk")


def opted_out_subscriber_ids(
    project: Project | int, subscriber_ids: list[int], channel: str, category: str = ""
) -> set[int]:
    """Who must not get this channel (whole channel off, or this category off)."""
    categories = [""] if not category else ["", category]
    return set(
        ChannelPreference.objects.for_project(project)
        .filter(subscriber_id__in=subscriber_ids, channel=channel, category__in=categories, opted_out=True)
        .values_list("subscriber_id", flat=True)
    )


def active_devices(project: Project | int, subscriber_ids: list[int]) -> dict[int, list[Device]]:
    devices: dict[int, list[Device]] = defaultdict(list)
    for device in Device.objects.for_project(project).filter(subscriber_id__in=subscriber_ids, active=True):
        devices[device.subscriber_id].append(device)
    return dict(devices)


def import_running(project: Project | int) -> bool:
    return (
        ImportJob.objects.for_project(project)
        .filter(status__in=[ImportJob.Status.PENDING, ImportJob.Status.RUNNING])
        .exists()
    )


def import_get(project: Project | int, job_id: int) -> ImportJob:
    job = ImportJob.objects.for_project(project).filter(pk=job_id).first()
    if job is None:
        raise NotFound(f"No import {job_id}.", field="import")
    return job


def subscriber_export(project: Project | int, subscriber: Subscriber) -> dict[str, Any]:
    """Everything held about one person (the privacy export)."""
    aliases = Subscriber.objects.for_project(project).filter(merged_into=subscriber)
    return {
        "external_id": subscriber.external_id,
        "anonymous_ids": sorted(
            filter(None, [subscriber.anonymous_id, *aliases.values_list("anonymous_id", flat=True)])
        ),
        "email": subscriber.email,
        "phone": subscriber.phone,
        "timezone": subscriber.timezone,
        "locale": subscriber.locale,
        "attributes": subscriber.attributes,
        "created_at": subscriber.created_at.isoformat(),
        "updated_at": subscriber.updated_at.isoformat(),
        "tags": sorted(subscriber_tag_names(project, [subscriber.pk]).get(subscriber.pk, set())),
        "tag_events": [
            {"tag": e.tag_name, "action": e.action, "source": e.source, "at": e.created_at.isoformat()}
            for e in subscriber.tag_events.order_by("created_at", "pk")
        ],
        "devices": [
            {"platform": d.platform, "token": d.token, "active": d.active, "created_at": d.created_at.isoformat()}
            for d in subscriber.devices.order_by("pk")
        ],
        "segments": [s.name for s in subscriber_segments(project, subscriber)],
        "preferences": [
            {"channel": p.channel, "category": p.category, "opted_out": p.opted_out}
            for p in subscriber.preferences.order_by("channel", "category")
        ],
    }
