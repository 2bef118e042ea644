"""Fixtures for campaign tests: a published email template, dry-run connectors, and
subscribers inserted with one set-based statement."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from apps.campaigns.models import Campaign
from apps.campaigns.services import campaign_create
from apps.delivery.models import Connector, Template, TemplateVersion
from apps.projects.models import Project


def make_template(project: Project, key: str = "promo", *, published: bool = True) -> Template:
    template = Template.objects.create(project=project, key=key, channel="email", name=key.title())
    TemplateVersion.objects.create(
        project=project,
        template=template,
        number=1,
        content={
            "email": {
                "subject": "Hello {{ subscriber.first_name }}",
                "text": "Hi {{ subscriber.first_name }}, our autumn sale is on.",
                "html": "<p>Hi {{ subscriber.first_name }}, our autumn sale is on.</p>",
            }
        },
        published_at=timezone.now() if published else None,
    )
    return template


def make_connector(project: Project, *, default: bool = True, **settings: Any) -> Connector:
    connector = Connector(project=project, channel="email", provider="dryrun", is_default=default, settings=settings)
    connector.set_credentials({"api_key": "dry-run-key-1234"})
    connector.save()
    return connector


def add_subscribers(project: Project, count: int, *, start: int = 0) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO subscribers_subscriber (project_id, external_id, email, phone, timezone, locale,
                attributes, created_at, updated_at)
            SELECT %s, 'u' || g, 'user' || g || '@example.com', '', '', '',
                jsonb_build_object('first_name', 'Ann' || g), now(), now()
            FROM generate_series(%s, %s) g
            """,
            [project.pk, start, start + count - 1],
        )


@pytest.fixture
def template(project: Project) -> Template:
    return make_template(project)


@pytest.fixture
def connector(project: Project) -> Connector:
    return make_connector(project)


@pytest.fixture
def make_campaign(project: Project, template: Template, connector: Connector) -> Callable[..., Campaign]:
    def _make(**kwargs: Any) -> Campaign:
        values: dict[str, Any] = {"project": project, "name": "Autumn sale", "template": template}
        values.update(kwargs)
        return campaign_create(**values)

    return _make
