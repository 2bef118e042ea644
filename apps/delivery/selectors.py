"""Reads of the delivery app: templates, their versions, email layouts, and what was sent.

Each takes the project first and raises ``NotFound`` for anything outside it, so another
project's key or id reads exactly like one that does not exist."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Max, Q, QuerySet

from apps.core.errors import NotFound
from apps.delivery.dispatch.sent_content import sent_content_unpack
from apps.delivery.models import Layout, SentContent, Template, TemplateVersion
from apps.projects.models import Project
from apps.subscribers.models import Subscriber


def template_list(project: Project, *, after_id: int | None = None) -> QuerySet[Template]:
    """Oldest first (keyset order), each with its newest and newest published version number."""
    qs = Template.objects.for_project(project).annotate(
        latest_version=Max("versions__number"),
        published_version=Max("versions__number", filter=Q(versions__published_at__isnull=False)),
    )
    if after_id is not None:
        qs = qs.filter(pk__gt=after_id)
    return qs.order_by("pk")


def template_get(project: Project, key: str) -> Template:
    template = template_list(project).filter(key=key).first()
    if template is None:
        raise NotFound(f"No template with key {key!r}.", code="template_not_found", field="key")
    return template


def template_version_get(project: Project, template: Template, number: int | None = None) -> TemplateVersion:
    """Version ``number`` of ``template``; without a number, its newest (a draft included)."""
    versions = TemplateVersion.objects.for_project(project).filter(template=template).select_related("layout")
    version = versions.filter(number=number).first() if number is not None else versions.order_by("-number").first()
    if version is None:
        wanted = f"version {number}" if number is not None else "any version yet"
        raise NotFound(
            f"Template {template.key!r} has no {wanted}.", code="template_version_not_found", field="version"
        )
    return version


def template_versions(project: Project, template: Template) -> QuerySet[TemplateVersion]:
    return TemplateVersion.objects.for_project(project).filter(template=template).order_by("-number")


def layout_list(project: Project, *, after_id: int | None = None) -> QuerySet[Layout]:
    qs = Layout.objects.for_project(project)
    if after_id is not None:
        qs = qs.filter(pk__gt=after_id)
    return qs.order_by("pk")


def layout_get(project: Project, layout_id: int, *, field: str | None = None) -> Layout:
    layout = Layout.objects.for_project(project).filter(pk=layout_id).first()
    if layout is None:
        raise NotFound(f"No layout with id {layout_id}.", code="layout_not_found", field=field)
    return layout


def subscriber_render_fields(subscriber: Subscriber | None) -> dict[str, Any] | None:
    """What a template sees of a subscriber: the fields the dispatcher loads for each send."""
    if subscriber is None:
        return None
    return {
        "id": subscriber.pk,
        "external_id": subscriber.external_id,
        "email": subscriber.email,
        "phone": subscriber.phone,
        "timezone": subscriber.timezone,
        "locale": subscriber.locale,
        "attributes": subscriber.attributes or {},
    }


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
