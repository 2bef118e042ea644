"""GET /api/v1/dead-letters and POST /api/v1/dead-letters/replay."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.models import Delivery, DeliveryEvent
from apps.delivery.services import DeliveryRequest, deliveries_enqueue

pytestmark = pytest.mark.django_db


def _deliveries(project: Any, states: list[str], channel: str = "email") -> list[Delivery]:
    ids = deliveries_enqueue(
        project=project,
        requests=[
            DeliveryRequest(
                channel=channel,
                destination=f"user{i}@example.com" if channel == "email" else f"+35191000000{i}",
                lane="normal",
                delivery_key=f"test:{channel}:{i}",
                origin_kind="message",
                origin_id="b1",
                content={"subject": "s", "text": "t"} if channel == "email" else {"text": "t"},
            )
            for i in range(len(states))
        ],
    )
    for pk, state in zip(ids, states, strict=True):
        reason = "550 mailbox unavailable" if state == "failed" else ""
        Delivery.objects.filter(pk=pk).update(state=state, attempts=5 if state == "failed" else 1, last_error=reason)
    return list(Delivery.objects.filter(pk__in=ids).order_by("id"))


def test_dead_letters_lists_only_failed_deliveries_with_their_reason(secret_client: Any, project: Any) -> None:
    dead, _sent = _deliveries(project, ["failed", "sent"])
    response = secret_client.get("/api/v1/dead-letters")
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["id"] for r in results] == [dead.pk]
    assert results[0]["last_error"] == "550 mailbox unavailable"


def test_replay_one_by_one_requeues_with_a_fresh_budget_and_an_event(secret_client: Any, project: Any) -> None:
    (dead,) = _deliveries(project, ["failed"])
    response = secret_client.post("/api/v1/dead-letters/replay", {"ids": [dead.pk]}, format="json")

    assert response.status_code == 202, response.content
    assert response.json() == {"replayed": [dead.pk], "count": 1}
    dead.refresh_from_db()
    assert dead.state == "queued"
    assert dead.attempt_budget > dead.attempts
    assert DeliveryEvent.objects.filter(delivery=dead).last().reason == "replayed from dead letter"


def test_replay_by_filter_takes_only_matching_dead_letters(secret_client: Any, project: Any) -> None:
    email_dead = _deliveries(project, ["failed", "failed"])
    sms_dead = _deliveries(project, ["failed"], channel="sms")
    response = secret_client.post("/api/v1/dead-letters/replay", {"channel": "email"}, format="json")
    assert response.status_code == 202
    assert sorted(response.json()["replayed"]) == [d.pk for d in email_dead]
    assert Delivery.objects.get(pk=sms_dead[0].pk).state == "failed"


def test_replaying_a_delivery_that_is_not_dead_is_a_clear_error_and_changes_nothing(
    secret_client: Any, project: Any
) -> None:
    dead, sent = _deliveries(project, ["failed", "sent"])
    events = DeliveryEvent.objects.count()
    response = secret_client.post("/api/v1/dead-letters/replay", {"ids": [dead.pk, sent.pk]}, format="json")

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "not_dead_letter"
    assert f"Delivery {sent.pk} is sent" in body["detail"]
    assert Delivery.objects.get(pk=dead.pk).state == "failed"
    assert DeliveryEvent.objects.count() == events


def test_replaying_another_projects_dead_letter_is_404(
    secret_client: Any, other_secret_client: Any, project: Any
) -> None:
    (dead,) = _deliveries(project, ["failed"])
    response = other_secret_client.post("/api/v1/dead-letters/replay", {"ids": [dead.pk]}, format="json")
    assert response.status_code == 404
    assert Delivery.objects.get(pk=dead.pk).state == "failed"
    assert other_secret_client.get("/api/v1/dead-letters").json()["results"] == []


def test_replay_without_ids_or_filter_is_refused(secret_client: Any) -> None:
    response = secret_client.post("/api/v1/dead-letters/replay", {}, format="json")
    assert response.status_code == 422
