"""Editors' previews and scheduled publishing."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from cms.models import DocsIndexPage, DocsPage, HomePage
from cms.tasks import publish_scheduled

pytestmark = pytest.mark.django_db


def test_an_editor_previews_unsaved_changes_in_the_site_look(site_home: HomePage, admin_client: Client) -> None:
    page = DocsPage.objects.get(slug="webhooks")
    url = f"/cms/pages/{page.pk}/edit/preview/"
    form = {"title": "Webhooks, previewed", "slug": "webhooks", "summary": "Not saved yet.", "body-count": "0"}
    assert admin_client.post(url, form).json()["is_valid"] is True
    preview = admin_client.get(url, {"mode": ""})
    html = preview.content.decode()
    assert preview.status_code == 200
    assert "<h1>Webhooks, previewed</h1>" in html and "docs-sidebar" in html
    assert DocsPage.objects.get(pk=page.pk).title == "Webhooks"  # nothing saved


def test_a_scheduled_page_goes_live_when_beat_runs_the_publisher(site_home: HomePage, site_client: Client) -> None:
    docs = DocsIndexPage.objects.get()
    page = DocsPage(slug="scheduled", title="Launch notes", summary="Tomorrow.", live=False)
    docs.add_child(instance=page)
    page.go_live_at = timezone.now() + datetime.timedelta(hours=1)
    revision = page.save_revision()
    revision.publish()  # what "Publish" does with a go-live time set: schedule it
    revision.refresh_from_db()
    assert revision.approved_go_live_at == page.go_live_at
    publish_scheduled()
    assert not DocsPage.objects.get(pk=page.pk).live
    assert site_client.get("/docs/scheduled/").status_code == 404

    # An hour passes.
    past = timezone.now() - datetime.timedelta(minutes=1)
    revision.approved_go_live_at = past
    revision.content["go_live_at"] = past.isoformat()
    revision.save(update_fields=["approved_go_live_at", "content"])
    publish_scheduled()
    assert DocsPage.objects.get(pk=page.pk).live
    assert site_client.get("/docs/scheduled/").status_code == 200


def test_beat_runs_the_publisher_every_minute() -> None:
    entry: dict[str, Any] = settings.CELERY_BEAT_SCHEDULE["cms-publish-scheduled"]
    assert entry == {"task": "cms.publish_scheduled", "schedule": 60.0}
    assert publish_scheduled.name == "cms.publish_scheduled"
