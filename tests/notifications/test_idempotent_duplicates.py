"""Duplicates of one keyed publish, at the same moment, on separate connections."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connections

from apps.core.models import IdempotencyRecord
from apps.notifications.models import Notification, OutboxEvent
from tests.notifications.conftest import publish_body

pytestmark = pytest.mark.django_db(transaction=True)


def _post_together(client_for: Any, raw: str, bodies: list[dict[str, Any]], key: str) -> list[Any]:
    start = threading.Barrier(len(bodies))
    answers: list[Any] = [None] * len(bodies)

    def post(index: int) -> None:
        client = client_for(raw)
        start.wait()
        try:
            answers[index] = client.post(
                "/api/v1/notifications", bodies[index], format="json", HTTP_IDEMPOTENCY_KEY=key
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def test_twenty_concurrent_duplicates_create_exactly_one_intent(
    project: Any, make_key: Any, client_for: Any, welcome: Any, ada: Any
) -> None:
    _, raw = make_key(project, "secret")
    answers = _post_together(client_for, raw, [publish_body()] * 20, key="same-moment")

    assert all(answer is not None for answer in answers)
    # Each duplicate waited for the first and replayed its answer: no 409 while it was quick.
    assert [a.status_code for a in answers] == [202] * 20, [a.content for a in answers if a.status_code != 202]
    assert len({a.json()["id"] for a in answers}) == 1
    assert sum(a.get("Idempotent-Replayed") == "true" for a in answers) == 19
    assert Notification.objects.count() == OutboxEvent.objects.count() == 1
    assert IdempotencyRecord.objects.get(key="same-moment").state == "completed"


def test_concurrent_duplicates_with_another_body_are_refused_and_change_nothing(
    project: Any, make_key: Any, client_for: Any, welcome: Any, ada: Any
) -> None:
    _, raw = make_key(project, "secret")
    bodies = [publish_body()] * 5 + [publish_body(data={"name": "Eve"})] * 5
    answers = _post_together(client_for, raw, bodies, key="mixed")

    codes = sorted(a.status_code for a in answers)
    # Whichever body came first wins; the other five are told the key was used for another.
    assert codes == [202] * 5 + [422] * 5
    assert {a.json()["code"] for a in answers if a.status_code == 422} == {"idempotency_key_reused"}
    assert Notification.objects.count() == 1


def test_a_refused_keyed_publish_rolls_back_with_its_record(
    project: Any, make_key: Any, client_for: Any, welcome: Any, ada: Any
) -> None:
    _, raw = make_key(project, "secret")
    client = client_for(raw)
    refused = client.post(
        "/api/v1/notifications", publish_body(template="no-such-template"), format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert refused.status_code >= 400
    assert not IdempotencyRecord.objects.filter(key="k").exists()
    assert (
        client.post("/api/v1/notifications", publish_body(), format="json", HTTP_IDEMPOTENCY_KEY="k").status_code == 202
    )
