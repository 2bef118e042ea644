"""What a node would do for one subscriber: when a wait resumes, the message a send renders,
and a test send of it through the project's real connector.

Each uses the engine's own code: ``waits.resume_at`` (through ``preview``), the node type's
``destinations`` and template lookup, the dispatcher's render context, and
``deliveries_enqueue`` for the test, so what staff see is what the journey would do.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from apps.core.errors import ApplicationError, NotFound
from apps.delivery.keys import delivery_key
from apps.projects.models import Project
from apps.workflows.context import BatchContext
from apps.workflows.nodes.base import NodeType, node_types

TEST_SENDS_PER_MINUTE = 5
TEST_ORIGIN = "journey_test"


def wait_sentence(preview: dict[str, Any]) -> str:
    """'reaching this at Mon 14:05 in Europe/Lisbon resumes Tue 09:00 WEST (08:00 UTC)'."""
    at, resumes = preview["at"], preview["resumes_at"]
    name = preview["timezone"]
    zone = ZoneInfo(name) if name else ZoneInfo("UTC")
    local_at, local_resume = at.astimezone(zone), resumes.astimezone(zone)
    long_wait = resumes - at >= timedelta(days=6)
    day = "%a %-d %b %Y %H:%M" if long_wait else "%a %H:%M"
    where = f" in {name}" if name else " UTC"
    utc = resumes.astimezone(ZoneInfo("UTC"))
    return (
        f"reaching this at {local_at:%a %H:%M}{where} resumes {local_resume.strftime(day)}"
        f"{' ' + local_resume.tzname() if name else ''} ({utc:%H:%M} UTC"
        + (f" on {utc:%-d %b}" if long_wait else "")
        + ")"
    )


@dataclass(frozen=True)
class Rendered:
    channel: str
    content: dict[str, Any]
    destinations: list[str]
    template: str
    version: int


def _kind(node: dict[str, Any]) -> NodeType:
    kind = node_types.get(node["type"]) if node["type"] in node_types else None
    if kind is None or not hasattr(kind, "destinations"):
        raise ApplicationError(f"Node {node['id']!r} sends no message.", code="not_a_send_node", field="node")
    return kind


def _subscriber(project: Project, external_id: str) -> Any:
    from apps.subscribers.selectors import subscriber_get

    if not external_id:
        raise ApplicationError("Choose a subscriber by external id.", code="subscriber_required", field="subscriber")
    return subscriber_get(project, external_id[:255])


def message_render(*, project: Project, node: dict[str, Any], external_id: str) -> Rendered:
    """The message this send node would send the subscriber now (its template's published version)."""
    from apps.delivery.models import TemplateVersion
    from apps.delivery.rendering import render, render_context
    from apps.delivery.selectors import subscriber_render_fields

    kind = _kind(node)
    config = node.get("config") or {}
    if kind.config_issues(node["id"], config):
        raise ApplicationError("Finish this node's settings first.", code="node_incomplete", field="node")
    subscriber = _subscriber(project, external_id)
    channel = kind.template_channel(config)  # type: ignore[attr-defined]
    ctx = BatchContext(project=project, now=timezone.now(), subscriber_ids=[subscriber.pk])
    version_id = ctx.template_version_id(str(config["template"]), channel)
    if version_id is None:
        raise NotFound(
            f"The {channel} template {config['template']!r} has no published version in this project.",
            code="template_unpublished",
            field="template",
        )
    version = TemplateVersion.objects.select_related("layout", "template").get(pk=version_id)
    info = ctx.subscriber(subscriber.pk)
    person = subscriber_render_fields(subscriber)
    from apps.workflows.nodes._send import subscriber_render_context

    context = render_context(person, {"subscriber": subscriber_render_context(info)})
    content = render(version, context, channel=channel)
    addresses = kind.destinations(config, info, ctx) if info and info.live else []  # type: ignore[attr-defined]
    return Rendered(channel, content, addresses, version.template.key, version.number)


def _rate_key(project: Project, user: Any) -> str:
    minute = timezone.now().strftime("%Y%m%d%H%M")
    return f"builder-test-send:{project.pk}:{getattr(user, 'pk', 0)}:{minute}"


@transaction.atomic
def journey_test_send(
    *, project: Project, workflow_key: str, node: dict[str, Any], external_id: str, user: Any
) -> list[int]:
    """Enqueue the node's message to one subscriber as a test: the normal delivery path,
    the project's connector (the node's own, else the channel's default), at most
    ``TEST_SENDS_PER_MINUTE`` a minute per staff member."""
    from apps.delivery.services import DeliveryRequest, deliveries_enqueue

    rendered = message_render(project=project, node=node, external_id=external_id)
    if not rendered.destinations:
        raise ApplicationError(
            f"This subscriber has no {rendered.channel} destination (address, number or device).",
            code="no_destination",
            field="subscriber",
        )
    key = _rate_key(project, user)
    cache.add(key, 0, timeout=120)
    if cache.incr(key) > TEST_SENDS_PER_MINUTE:
        raise ApplicationError(
            f"At most {TEST_SENDS_PER_MINUTE} test sends a minute; try again shortly.",
            code="test_send_rate_limited",
            status=429,
        )
    config = node.get("config") or {}
    subscriber = _subscriber(project, external_id)
    ctx = BatchContext(project=project, now=timezone.now(), subscriber_ids=[subscriber.pk])
    version_id = ctx.template_version_id(str(config["template"]), rendered.channel)
    from apps.workflows.nodes._send import subscriber_render_context

    info = ctx.subscriber(subscriber.pk)
    test = uuid.uuid4().hex[:12]
    requests = [
        DeliveryRequest(
            channel=rendered.channel,
            destination=address,
            lane="high",
            delivery_key=delivery_key(f"{TEST_ORIGIN}:{test}", address),
            origin_kind=TEST_ORIGIN,
            origin_id=f"{workflow_key}:{node['id']}"[:64],
            template_version_id=version_id,
            context={"subscriber": subscriber_render_context(info)},
            subscriber_id=subscriber.pk,
            connector_id=config.get("connector") or None,
            category=str(config.get("category") or ""),
        )
        for address in rendered.destinations
    ]
    return deliveries_enqueue(project=project, requests=requests)


def moment(value: str | None) -> datetime | None:
    """A moment typed in the form: naive means local to the zone the preview resolves."""
    if not value:
        return None
    return datetime.fromisoformat(value)
