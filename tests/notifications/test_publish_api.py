"""POST /api/v1/notifications: intent + outbox in one transaction, answered 202."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.notifications.models import Notification, OutboxEvent
from apps.notifications.template_refs import template_cache_clear
from tests.notifications.conftest import make_template, publish_body, row_counts

pytestmark = pytest.mark.django_db


def test_publish_stores_intent_and_outbox_event_and_answers_202(secret_client: Any, welcome: Any, ada: Any) -> None:
    response = secret_client.post("/api/v1/notifications", publish_body(), format="json")

    assert response.status_code == 202, response.content
    notification = Notification.objects.get(pk=response.json()["id"])
    assert response["Location"] == f"/api/v1/notifications/{notification.pk}"
    assert notification.template_version_id == welcome.pk
    assert notification.recipients == [{"subscriber": "ada"}]
    assert notification.priority == "high"
    event = OutboxEvent.objects.get(notification=notification)
    assert event.relayed_at is None and event.lane == "high"


def test_publish_pins_latest_version_at_accept_time(secret_client: Any, project: Any, welcome: Any, ada: Any) -> None:
    newer = make_template(project, content={"email": {"subject": "v2", "text": "v2", "html": "v2"}})
    template_cache_clear()
    response = secret_client.post("/api/v1/notifications", publish_body(), format="json")
    assert Notification.objects.get(pk=response.json()["id"]).template_number == newer.number

    pinned = secret_client.post("/api/v1/notifications", publish_body(template="welcome@1"), format="json")
    assert Notification.objects.get(pk=pinned.json()["id"]).template_number == 1


def test_publish_path_is_one_transaction_with_few_queries(secret_client: Any, welcome: Any, ada: Any) -> None:
    secret_client.post("/api/v1/notifications", publish_body(), format="json")  # warms key + template caches
    body = publish_body(to=["ada", {"email": "grace@example.com"}])
    with CaptureQueriesContext(connection) as queries:
        response = secret_client.post("/api/v1/notifications", body, format="json")
    assert response.status_code == 202
    # Savepoints stand in for BEGIN/COMMIT inside the test's own transaction.
    sql = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    writes = [s for s in sql if "INSERT" in s]
    # One statement writes the intent and its outbox event (atomic by itself).
    assert len(writes) == 1 and "notifications_outboxevent" in writes[0], sql
    # The key lookup and that statement, which also checks the subscriber; the template is cached.
    assert len(sql) <= 2, sql


def test_same_idempotency_key_and_body_replays_the_same_answer(secret_client: Any, welcome: Any, ada: Any) -> None:
    first = secret_client.post("/api/v1/notifications", publish_body(), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = secret_client.post("/api/v1/notifications", publish_body(), format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Notification.objects.count() == 1 and OutboxEvent.objects.count() == 1


def test_same_idempotency_key_with_another_body_is_refused(secret_client: Any, welcome: Any, ada: Any) -> None:
    secret_client.post("/api/v1/notifications", publish_body(), format="json", HTTP_IDEMPOTENCY_KEY="k-2")
    other = secret_client.post(
        "/api/v1/notifications", publish_body(data={"name": "Eve"}), format="json", HTTP_IDEMPOTENCY_KEY="k-2"
    )

    assert other.status_code == 422
    assert other.json()["code"] == "idempotency_key_reused"
    assert Notification.objects.count() == 1


def test_publish_needs_the_publish_scope(public_client: Any, welcome: Any, ada: Any) -> None:
    response = public_client.post("/api/v1/notifications", publish_body(), format="json")
    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"
    assert Notification.objects.count() == 0


def _soon() -> str:
    return (timezone.now() - timedelta(days=1)).isoformat()


BAD_INPUT = [
    ("unknown_template", {"template": "nope"}, "unknown_template", "template"),
    ("unknown_version", {"template": "welcome@9"}, "unknown_template_version", "template"),
    ("malformed_ref", {"template": "welcome@x"}, "invalid_template_ref", "template"),
    ("channel_the_template_lacks", {"channels": ["slack"]}, "template_lacks_channel", "channels"),
    ("unknown_channel", {"channels": ["pigeon"]}, "validation_error", "channels.0"),
    ("invalid_email", {"to": [{"email": "not-an-address"}]}, "invalid_destination", "to[0]"),
    ("invalid_phone", {"to": [{"phone": "912345678"}], "channels": ["sms"]}, "invalid_destination", "to[0]"),
    ("phone_on_email", {"to": [{"phone": "+351912345678"}]}, "destination_channel_mismatch", "to[0]"),
    ("unknown_subscriber", {"to": ["ada", "ghost"]}, "unknown_subscriber", "to[1]"),
    ("bad_priority", {"priority": "urgent"}, "validation_error", "priority"),
    ("unparsable_send_at", {"send_at": "tomorrow"}, "validation_error", "send_at"),
    ("past_send_at", {"send_at": "PAST"}, "send_at_past", "send_at"),
    ("no_recipients", {"to": []}, "validation_error", "to"),
]


@pytest.mark.parametrize(("case", "overrides", "code", "field"), BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_publish_input_is_refused_naming_the_field_and_stores_nothing(
    secret_client: Any, welcome: Any, ada: Any, case: str, overrides: dict, code: str, field: str
) -> None:
    if overrides.get("send_at") == "PAST":
        overrides = {**overrides, "send_at": _soon()}
    before = row_counts()
    response = secret_client.post("/api/v1/notifications", publish_body(**overrides), format="json")

    assert response.status_code == 422, response.content
    body = response.json()
    assert body["code"] == code
    assert response["Content-Type"] == "application/problem+json"
    assert field in {e["field"] for e in body["errors"]}
    assert row_counts() == before


def test_draft_version_cannot_be_published_to(secret_client: Any, project: Any, welcome: Any, ada: Any) -> None:
    make_template(project, publish=False)  # version 2 is a draft
    response = secret_client.post("/api/v1/notifications", publish_body(template="welcome@2"), format="json")
    assert response.status_code == 422
    assert response.json()["code"] == "unknown_template_version"


def test_data_that_breaks_a_strict_template_names_the_variable(secret_client: Any, project: Any, ada: Any) -> None:
    make_template(
        project,
        key="receipt",
        strict=True,
        content={"email": {"subject": "Order {{ order_id }}", "text": "Total {{ total }}", "html": "{{ total }}"}},
    )
    before = row_counts()
    response = secret_client.post(
        "/api/v1/notifications", publish_body(template="receipt", data={"order_id": 7}), format="json"
    )

    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "template_variable_missing"
    assert "'total'" in body["detail"]
    assert body["errors"][0]["field"] == "data.total"
    assert row_counts() == before


@pytest.mark.parametrize(
    ("subject", "data", "named"),
    [
        ("{% for k, v in usage|dictsort %}{{ k }}{% endfor %}", {"usage": [1, 2]}, "AttributeError"),
        ("{{ name|truncate(-5) }}", {"name": "Ada Lovelace"}, "AssertionError"),
        ("{{ (n|float) ** 400 }}", {"n": "1e10"}, "OverflowError"),
    ],
)
def test_data_a_strict_template_cannot_render_is_refused_as_a_template_error(
    secret_client: Any, project: Any, ada: Any, subject: str, data: dict, named: str
) -> None:
    make_template(project, key="usage", strict=True, content={"email": {"subject": subject, "text": "x"}})
    before = row_counts()
    response = secret_client.post("/api/v1/notifications", publish_body(template="usage", data=data), format="json")

    assert response.status_code == 422
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == "template_render_failed"
    assert named in body["detail"]
    assert row_counts() == before


def test_strict_template_accepts_complete_data(secret_client: Any, project: Any, ada: Any) -> None:
    make_template(project, key="receipt", strict=True, content={"email": {"subject": "{{ total }}", "text": "x"}})
    response = secret_client.post(
        "/api/v1/notifications", publish_body(template="receipt", data={"total": 3}), format="json"
    )
    assert response.status_code == 202


def test_payload_over_the_size_limit_is_413_and_stores_nothing(
    secret_client: Any, welcome: Any, ada: Any, settings: Any
) -> None:
    body = publish_body(data={"blob": "x" * (settings.TIDINGS_API_MAX_BODY_BYTES + 10)})
    response = secret_client.post("/api/v1/notifications", body, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert row_counts()["notifications"] == 0


def test_future_send_at_is_kept_on_the_intent(secret_client: Any, welcome: Any, ada: Any) -> None:
    when = timezone.now() + timedelta(hours=2)
    response = secret_client.post("/api/v1/notifications", publish_body(send_at=when.isoformat()), format="json")
    assert response.status_code == 202
    assert abs(Notification.objects.get().send_at - when) < timedelta(seconds=1)


def test_another_projects_template_is_unknown(other_secret_client: Any, welcome: Any, other_project: Any) -> None:
    response = other_secret_client.post(
        "/api/v1/notifications", publish_body(to=[{"email": "a@example.com"}]), format="json"
    )
    assert response.status_code == 422
    assert response.json()["code"] == "unknown_template"


def test_the_store_statement_is_prepared_once_per_connection(secret_client: Any, welcome: Any, ada: Any) -> None:
    for _ in range(3):
        assert secret_client.post("/api/v1/notifications", publish_body(), format="json").status_code == 202
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s", ["%notifications_outboxevent%"]
        )
        assert cursor.fetchone()[0] == 1


def test_without_prepared_statements_the_store_statement_is_not_prepared(
    secret_client: Any, welcome: Any, ada: Any, settings: Any
) -> None:
    settings.TIDINGS_DB_PREPARED_STATEMENTS = False
    assert secret_client.post("/api/v1/notifications", publish_body(), format="json").status_code == 202
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone()[0] == 0
