"""Wait previews, message previews and test sends from the builder, through the engine's own code."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from apps.delivery.models import Attempt, Delivery
from apps.subscribers.models import Subscriber
from apps.workflows.builder.previews import TEST_SENDS_PER_MINUTE, wait_sentence
from apps.workflows.preview import wait_preview_config
from tests.delivery.conftest import make_connector, redis_clear
from tests.fixtures.worker import wait_for
from tests.workflows.builder.conftest import Editor
from tests.workflows.builder.helpers import published_template


@pytest.mark.django_db
def test_the_wait_sentence_reads_the_engines_resume_time_in_the_subscribers_zone(project: Any) -> None:
    monday = datetime(2026, 3, 30, 14, 5)  # a Monday, local time
    preview = wait_preview_config(
        project=project, config={"mode": "time_of_day", "time": "09:00"}, at=monday, timezone_name="Europe/Lisbon"
    )
    assert wait_sentence(preview) == "reaching this at Mon 14:05 in Europe/Lisbon resumes Tue 09:00 WEST (08:00 UTC)"
    Subscriber.objects.create(project=project, external_id="ny", timezone="America/New_York")
    preview = wait_preview_config(
        project=project, config={"mode": "time_of_day", "time": "09:00"}, at=monday, external_id="ny"
    )
    assert preview["timezone_source"] == "subscriber"
    assert wait_sentence(preview) == "reaching this at Mon 14:05 in America/New_York resumes Tue 09:00 EDT (13:00 UTC)"


@pytest.mark.django_db
def test_the_wait_preview_endpoint_answers_for_a_draft_node(editor: Editor, client: Any) -> None:
    editor.post("add", type="wait", after_node="start", after_handle="next")
    editor.post("configure", node="wait-1", **{"cfg.mode": "weekday", "cfg.weekday": "tuesday", "cfg.time": "09:00"})
    url = "/console/workflows/welcome/builder/wait-preview"
    page = client.get(url, {"node": "wait-1", "timezone": "Europe/Lisbon", "at": "2026-03-30T14:05"}).content.decode()
    assert "reaching this at Mon 14:05 in Europe/Lisbon resumes Tue 09:00 WEST (08:00 UTC)" in page
    assert client.get(url, {"node": "wait-1", "timezone": "Mars/Olympus"}).status_code == 422
    assert client.get(url, {"node": "start"}).status_code == 404
    assert client.get(url, {"node": "wait-1", "subscriber": "nobody"}).status_code == 404


@pytest.mark.django_db
def test_a_message_preview_renders_for_the_chosen_subscriber(editor: Editor, client: Any, project: Any) -> None:
    published_template(project, "welcome-email", "email")
    published_template(project, "welcome-push", "push")
    Subscriber.objects.create(
        project=project, external_id="ada", email="ada@example.com", attributes={"first_name": "Ada"}
    )
    editor.post("add", type="email", after_node="start", after_handle="next")
    editor.post("configure", node="email-1", **{"cfg.template": "welcome-email"})
    editor.post("add", type="push", after_node="email-1", after_handle="next")
    editor.post("configure", node="push-1", **{"cfg.template": "welcome-push"})
    url = "/console/workflows/welcome/builder/message-preview"
    email = client.get(url, {"node": "email-1", "subscriber": "ada"}).content.decode()
    assert "Hi Ada" in email and 'sandbox title="Email as rendered"' in email
    assert 'srcdoc="&lt;p&gt;Hello Ada&lt;/p&gt;"' in email
    push = client.get(url, {"node": "push-1", "subscriber": "ada"}).content.decode()
    assert 'data-testid="push-card"' in push and "Hi Ada" in push and "no destination" in push
    assert client.get(url, {"node": "email-1", "subscriber": "nobody"}).status_code == 404


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_send_a_test_enqueues_through_the_delivery_path_and_the_worker_sends_it(
    project: Any, member: Any, client: Any, celery_worker: Any
) -> None:
    from apps.workflows.services import workflow_save_draft

    redis_clear()
    connector = make_connector(project)
    published_template(project, "welcome-email", "email")
    Subscriber.objects.create(
        project=project, external_id="ada", email="ada@example.com", attributes={"first_name": "Ada"}
    )
    graph = {
        "nodes": [
            {"id": "start", "type": "start"},
            {"id": "mail", "type": "email", "config": {"template": "welcome-email"}},
        ],
        "edges": [{"from": "start", "handle": "next", "to": "mail"}],
    }
    workflow_save_draft(project=project, key="welcome", graph=graph)
    client.force_login(member)
    url = "/console/workflows/welcome/builder/test-send"
    answer = client.post(url, {"node": "mail", "subscriber": "ada"})
    assert answer.status_code == 200, answer.content.decode()
    delivery = Delivery.objects.get(project=project, origin_kind="journey_test")
    assert delivery.destination == "ada@example.com" and delivery.origin_id == "welcome:mail"
    wait_for(lambda: Delivery.objects.get(pk=delivery.pk).state in ("sent", "delivered"), timeout=60)
    assert Attempt.objects.get(delivery_id=delivery.pk).connector_id == connector.pk
    for _ in range(TEST_SENDS_PER_MINUTE - 1):
        assert client.post(url, {"node": "mail", "subscriber": "ada"}).status_code == 200
    limited = client.post(url, {"node": "mail", "subscriber": "ada"})
    assert limited.status_code == 429 and "test sends a minute" in limited.content.decode()
    assert Delivery.objects.filter(project=project, origin_kind="journey_test").count() == TEST_SENDS_PER_MINUTE


def test_the_sentence_names_the_date_of_a_long_wait() -> None:
    at = datetime(2026, 3, 30, 14, 5, tzinfo=ZoneInfo("UTC"))
    preview = {"at": at, "resumes_at": datetime(2026, 4, 30, 8, 0, tzinfo=ZoneInfo("UTC")), "timezone": "Europe/Lisbon"}
    assert wait_sentence(preview) == (
        "reaching this at Mon 15:05 in Europe/Lisbon resumes Thu 30 Apr 2026 09:00 WEST (08:00 UTC on 30 Apr)"
    )


@pytest.mark.parametrize(
    ("text", "attributes", "named"),
    [
        ("{% for k, v in subscriber.usage|dictsort %}{{ k }}{% endfor %}", {"usage": [1, 2]}, "AttributeError"),
        ("{{ subscriber.plan + 1 }}", {"plan": "gold"}, "TypeError"),
        ("{{ subscriber.first_name|truncate(-5) }}", {"first_name": "Ada"}, "AssertionError"),
        ("{{ (subscriber.score|float) ** 400 }}", {"score": "1e10"}, "OverflowError"),
    ],
)
@pytest.mark.django_db
def test_a_message_preview_of_a_template_that_fails_to_render_shows_the_reason_inline(
    editor: Editor, client: Any, project: Any, text: str, attributes: dict, named: str
) -> None:
    published_template(project, "usage-sms", "sms", {"text": text})
    Subscriber.objects.create(project=project, external_id="ada", phone="+351912345678", attributes=attributes)
    editor.post("add", type="sms", after_node="start", after_handle="next")
    editor.post("configure", node="sms-1", **{"cfg.template": "usage-sms"})
    response = client.get("/console/workflows/welcome/builder/message-preview", {"node": "sms-1", "subscriber": "ada"})
    assert response.status_code == 422
    page = response.content.decode()
    assert 'class="error" data-code="template_render_failed"' in page and named in page
