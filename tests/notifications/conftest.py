"""Fixtures for the publish API: templates, subscribers and helpers to count rows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from apps.delivery.models import Delivery, Template, TemplateVersion
from apps.delivery.services import template_create, template_version_create
from apps.notifications.models import Broadcast, Notification, OutboxEvent
from apps.notifications.template_refs import template_cache_clear
from apps.projects.models import Project
from apps.subscribers.models import Device, Subscriber

EMAIL = {"subject": "Hello {{ name }}", "text": "Hi {{ name }}", "html": "<p>Hi {{ name }}</p>"}
SMS = {"text": "Hi {{ name }}"}
PUSH = {"title": "Hello {{ name }}", "body": "Hi {{ name }}", "data": {}}


@pytest.fixture(autouse=True)
def _fresh_template_cache() -> Iterator[None]:
    template_cache_clear()
    yield
    template_cache_clear()


def make_template(
    project: Project, key: str = "welcome", content: dict | None = None, strict: bool = False, publish: bool = True
) -> TemplateVersion:
    template = Template.objects.for_project(project).filter(key=key).first() or template_create(
        project=project, key=key, channel="email", name=key
    )
    return template_version_create(
        template=template,
        content=content or {"email": EMAIL, "sms": SMS, "push": PUSH},
        strict=strict,
        publish=publish,
    )


@pytest.fixture
def welcome(project: Project) -> TemplateVersion:
    return make_template(project)


@pytest.fixture
def ada(project: Project) -> Subscriber:
    subscriber = Subscriber.objects.create(
        project=project, external_id="ada", email="ada@example.com", phone="+351912345678", attributes={"tier": "gold"}
    )
    Device.objects.create(project=project, subscriber=subscriber, platform="android", token="tok-ada-android-1")
    return subscriber


def row_counts() -> dict[str, int]:
    return {
        "notifications": Notification.objects.count(),
        "outbox": OutboxEvent.objects.count(),
        "deliveries": Delivery.objects.count(),
        "broadcasts": Broadcast.objects.count(),
    }


def publish_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "template": "welcome",
        "to": ["ada"],
        "channels": ["email"],
        "priority": "high",
        "data": {"name": "Ada"},
    }
    body.update(overrides)
    return body
