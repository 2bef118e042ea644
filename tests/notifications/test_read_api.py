"""GET a notification's whole story, and one subscriber's history across origins."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from apps.delivery.models import Attempt, Delivery, DeliveryEvent
from apps.delivery.services import DeliveryRequest, deliveries_enqueue
from apps.notifications.router import outbox_relay
from tests.notifications.conftest import publish_body

pytestmark = pytest.mark.django_db


def test_notification_detail_shows_intent_deliveries_attempts_and_events(
    secret_client: Any, project: Any, welcome: Any, ada: Any
) -> None:
    notification_id = secret_client.post(
        "/api/v1/notifications", publish_body(channels=["email", "sms"]), format="json"
    ).json()["id"]
    outbox_relay(project=project)
    delivery = Delivery.objects.get(channel="email")
    Attempt.objects.create(
        project=project,
        delivery=delivery,
        number=1,
        started_at=timezone.now(),
        finished_at=timezone.now(),
        outcome="retryable",
        provider_code="503",
        provider_message="try later",
        latency_ms=12,
    )

    response = secret_client.get(f"/api/v1/notifications/{notification_id}")

    assert response.status_code == 200
    body = response.json()
    assert body["template"] == "welcome@1"
    assert body["state"] == "routed"
    assert body["to"] == [{"subscriber": "ada"}]
    by_channel = {d["channel"]: d for d in body["deliveries"]}
    assert set(by_channel) == {"email", "sms"}
    assert by_channel["email"]["attempt_log"][0]["provider_code"] == "503"
    assert [e["state"] for e in by_channel["sms"]["events"]] == ["queued"]


def test_another_projects_notification_is_404(
    secret_client: Any, other_secret_client: Any, welcome: Any, ada: Any
) -> None:
    notification_id = secret_client.post("/api/v1/notifications", publish_body(), format="json").json()["id"]
    response = other_secret_client.get(f"/api/v1/notifications/{notification_id}")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert secret_client.get("/api/v1/notifications/999999999").status_code == 404
    assert secret_client.get("/api/v1/notifications/abc").status_code == 404


def test_subscriber_history_spans_channels_and_origins(
    secret_client: Any, other_secret_client: Any, project: Any, welcome: Any, ada: Any
) -> None:
    secret_client.post("/api/v1/notifications", publish_body(channels=["email", "push"]), format="json")
    outbox_relay(project=project)
    deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel="sms",
                destination=ada.phone,
                lane="normal",
                delivery_key="journey_step:9:+351912345678",
                origin_kind="journey_step",
                origin_id="9",
                content={"text": "hi"},
                subscriber_id=ada.pk,
            )
        ],
    )

    response = secret_client.get("/api/v1/subscribers/ada/messages")

    assert response.status_code == 200
    results = response.json()["results"]
    assert {(r["channel"], r["origin"]["kind"]) for r in results} == {
        ("email", "notification"),
        ("push", "notification"),
        ("sms", "journey_step"),
    }
    assert [r["id"] for r in results] == sorted((r["id"] for r in results), reverse=True)
    assert other_secret_client.get("/api/v1/subscribers/ada/messages").status_code == 404
    page = secret_client.get("/api/v1/subscribers/ada/messages?limit=2").json()
    assert len(page["results"]) == 2 and page["next_before"] == page["results"][-1]["id"]
    assert DeliveryEvent.objects.count() == 3
