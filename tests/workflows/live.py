"""Data for journeys that really send: dry-run connectors, templates, subscribers with devices."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from apps.delivery.models import Connector, Template, TemplateVersion
from apps.subscribers.models import Device, Subscriber
from tests.workflows.helpers import edge, node

CONTENT = {
    "email": {"subject": "Hi {{ subscriber.external_id }}", "text": "Welcome", "html": "<p>Welcome</p>"},
    "push": {"title": "Hi", "body": "Welcome {{ subscriber.external_id }}"},
}


def connectors(project: Any, **settings: Any) -> None:
    for channel in ("email", "push"):
        connector = Connector(
            project=project,
            channel=channel,
            provider="dryrun",
            is_default=True,
            settings={"receipt_delay_s": 0, "delivered_rate": 0, **settings.get(channel, {})},
        )
        connector.set_credentials({"api_key": "dry-run-key-1234"})
        connector.save()


def templates(project: Any) -> None:
    for channel, key in (("email", "welcome-email"), ("push", "welcome-push")):
        template = Template.objects.create(project=project, key=key, channel=channel, name=key)
        TemplateVersion.objects.create(
            project=project,
            template=template,
            number=1,
            content={channel: CONTENT[channel]},
            published_at=timezone.now(),
        )


def people(project: Any, count: int, *, email: bool = True, devices: int = 1, prefix: str = "p") -> list[Subscriber]:
    made = Subscriber.objects.bulk_create(
        [
            Subscriber(project=project, external_id=f"{prefix}{i}", email=f"{prefix}{i}@example.com" if email else "")
            for i in range(count)
        ]
    )
    Device.objects.bulk_create(
        [
            Device(project=project, subscriber=s, platform="android", token=f"tok-{s.pk}-{d}")
            for s in made
            for d in range(devices)
        ]
    )
    return made


def send_graph() -> dict[str, Any]:
    """start -> add tag -> condition(has it) -> email -> push -> end (the benchmark's journey)."""
    return {
        "nodes": [
            node("start", "start"),
            node("tag", "add_tag", tags=["journey"]),
            node("check", "condition", predicates=[{"op": "has_tag", "tag": "journey"}]),
            node("mail", "email", template="welcome-email"),
            node("push", "push", template="welcome-push"),
            node("end", "end"),
            node("skip", "stop", reason="not tagged"),
        ],
        "edges": [
            edge("start", "tag"),
            edge("tag", "check"),
            edge("check", "mail", "yes"),
            edge("check", "skip", "no"),
            edge("mail", "push"),
            edge("push", "end"),
        ],
    }
