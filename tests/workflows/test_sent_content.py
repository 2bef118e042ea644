"""A journey's path shows each message as it went out, not as it would render today."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from apps.delivery.dispatch.sent_content import sent_content_pack
from apps.delivery.models import Delivery, SentContent, Template, TemplateVersion
from apps.delivery.selectors import sent_content_by_delivery
from apps.delivery.services import sent_content_prune
from apps.subscribers.models import Device, Subscriber
from apps.workflows.models import Execution, Journey
from apps.workflows.services import execution_start
from tests.factories import MembershipFactory
from tests.fixtures.worker import wait_for
from tests.workflows import live
from tests.workflows.helpers import chain, node, publish, start_and_expand, subscribers

NAMED = {
    "email": {"subject": "Hi {{ subscriber.name }}", "text": "Welcome", "html": "<p>Welcome {{ subscriber.name }}</p>"},
    "push": {"title": "Hi", "body": "Welcome {{ subscriber.name }}"},
}


def _named_templates(project) -> None:
    for channel, key in (("email", "welcome-email"), ("push", "welcome-push")):
        template = Template.objects.create(project=project, key=key, channel=channel, name=key)
        TemplateVersion.objects.create(
            project=project, template=template, number=1, content={channel: NAMED[channel]}, published_at=timezone.now()
        )


@pytest.mark.django_db(transaction=True)
def test_journey_path_shows_the_message_as_sent_after_the_subscriber_changes(client, project, celery_worker):
    live.connectors(project)
    _named_templates(project)
    ada = Subscriber.objects.create(
        project=project, external_id="ada", email="ada@example.com", attributes={"name": "Ada"}
    )
    Device.objects.create(project=project, subscriber=ada, platform="android", token="tok-ada")
    version = publish(project, "welcome", live.send_graph())
    execution = execution_start(project=project, workflow=version.workflow, audience={"everyone": True})

    def finished() -> bool:
        execution.refresh_from_db()
        return execution.state == Execution.State.COMPLETED

    wait_for(finished, timeout=180, message=f"execution stuck:\n{celery_worker.log()[-3000:]}")
    sent = Delivery.objects.filter(project=project, sent_at__isnull=False)
    assert sent.count() == 2
    assert set(SentContent.objects.values_list("project_id", "delivery_id")) == {(project.pk, d.pk) for d in sent}

    ada.attributes = {"name": "Grace"}
    ada.save(update_fields=["attributes"])
    client.force_login(MembershipFactory(organization=project.organization, role="editor").user)
    journey = Journey.objects.get(execution=execution)
    page = client.get(f"/console/workflows/journeys/{journey.pk}/").content.decode()
    assert "Grace" not in page
    assert "Hi Ada" in page  # the subject
    assert 'sandbox=""' in page and "srcdoc=" in page and "Welcome Ada&lt;/p&gt;" in page  # the email, sandboxed
    assert 'data-testid="sent-push"' in page and "<div>Welcome Ada</div>" in page

    # Past retention the snapshot is gone, and the page says so instead of re-rendering.
    assert sent_content_prune(now=timezone.now() + timedelta(days=31)) == 2
    page = client.get(f"/console/workflows/journeys/{journey.pk}/").content.decode()
    assert page.count("no longer kept") == 2
    assert "Ada" not in page.replace("ada@example.com", "") and "Grace" not in page


@pytest.mark.django_db
@override_settings(TIDINGS_SENT_CONTENT_RETENTION_DAYS=7)
def test_pruning_removes_snapshots_past_retention_in_batches_and_keeps_newer_ones(project):
    now = timezone.now()
    ages = [8, 9, 10, 30, 400, 6, 1]
    SentContent.objects.bulk_create(
        SentContent(project=project, delivery_id=i + 1, created_at=now - timedelta(days=days), content=b"x")
        for i, days in enumerate(ages)
    )
    assert sent_content_prune(now=now, batch_size=2) == 5
    assert sorted(SentContent.objects.values_list("delivery_id", flat=True)) == [6, 7]


def test_pruning_runs_from_beat():
    entry = settings.CELERY_BEAT_SCHEDULE["delivery-sent-content-prune"]
    assert entry["task"] == "delivery.sent_content_prune"
    assert settings.TIDINGS_SENT_CONTENT_RETENTION_DAYS == 30


@pytest.mark.django_db
def test_another_projects_journey_and_snapshot_are_not_found(client, project, other_project):
    subscribers(other_project, 1)
    graph = chain(node("start", "start"), node("pause", "wait", mode="time_of_day", time="09:00"), node("end", "end"))
    execution = start_and_expand(other_project, publish(other_project, "theirs", graph))
    theirs = Journey.objects.get(execution=execution)
    SentContent.objects.create(
        project=other_project, delivery_id=99, created_at=timezone.now(), content=sent_content_pack({"text": "secret"})
    )
    client.force_login(MembershipFactory(organization=project.organization, role="editor").user)
    assert client.get(f"/console/workflows/journeys/{theirs.pk}/").status_code == 404
    assert sent_content_by_delivery(project, [99]) == {}
    assert sent_content_by_delivery(other_project, [99]) == {99: {"text": "secret"}}
