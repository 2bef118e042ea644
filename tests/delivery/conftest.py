"""Fixtures for the delivery tests: templates, connectors and subscribers of one project."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.models import Connector, Template, TemplateVersion
from apps.projects.models import Project
from apps.subscribers.models import Subscriber


@pytest.fixture
def email_version(project: Project) -> TemplateVersion:
    from django.utils import timezone

    template = Template.objects.create(project=project, key="welcome", channel="email", name="Welcome")
    return TemplateVersion.objects.create(
        project=project,
        template=template,
        number=1,
        content={
            "email": {
                "subject": "Hello {{ subscriber.first_name }}",
                "text": "Hi {{ subscriber.first_name }}, order {{ order_id }}",
                "html": "<p>Hi {{ subscriber.first_name }} &amp; {{ order_id }}</p>",
            },
            "sms": {"text": "Code {{ code }}"},
        },
        published_at=timezone.now(),
    )


def make_connector(project: Project, channel: str = "email", default: bool = True, **settings: Any) -> Connector:
    connector = Connector(project=project, channel=channel, provider="dryrun", is_default=default, settings=settings)
    connector.set_credentials({"api_key": "dry-run-key-1234"})
    connector.save()
    return connector


@pytest.fixture
def subscribers(project: Project) -> list[Subscriber]:
    return [
        Subscriber.objects.create(
            project=project,
            external_id=f"user-{i}",
            email=f"User{i}@Example.com" if i % 3 else "",
            phone=f"+35191000000{i}",
            attributes={"first_name": f"Ann{i}"},
        )
        for i in range(6)
    ]


def redis_clear() -> None:
    """Forget Tidings' own keys (buckets, wake flags, dry-run records), not the broker's."""
    from apps.delivery.redis_client import get_redis

    client = get_redis()
    keys = list(client.scan_iter("tidings:*", count=1000))
    if keys:
        client.delete(*keys)
