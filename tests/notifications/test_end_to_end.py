"""A notification's whole life with a real worker: publish → relay → dispatch → sent,
and a dead letter replayed until it goes out."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.models import Connector, Delivery
from tests.fixtures.worker import wait_for
from tests.notifications.conftest import make_template, publish_body

pytestmark = pytest.mark.worker


def _connector(project: Any, channel: str, **knobs: Any) -> Connector:
    connector = Connector(project=project, channel=channel, provider="dryrun", is_default=True, settings=knobs)
    connector.set_credentials({"api_key": "dry-run-key-1234"})
    connector.save()
    return connector


def _client(project: Any, make_key: Any, client_for: Any) -> Any:
    return client_for(make_key(project, "secret")[1])


def test_published_notification_is_sent_through_the_dry_run_adapter(
    celery_worker: Any, project: Any, make_key: Any, client_for: Any
) -> None:
    from apps.subscribers.models import Subscriber

    make_template(project)
    _connector(project, "email")
    _connector(project, "sms")
    Subscriber.objects.create(project=project, external_id="ada", email="ada@example.com", phone="+351912345678")
    api = _client(project, make_key, client_for)

    response = api.post("/api/v1/notifications", publish_body(channels=["email", "sms"]), format="json")
    assert response.status_code == 202
    notification_id = response.json()["id"]

    def sent() -> Any:
        body = api.get(f"/api/v1/notifications/{notification_id}").json()
        states = {d["channel"]: d["state"] for d in body["deliveries"]}
        return body if len(states) == 2 and set(states.values()) <= {"sent", "delivered"} else None

    body = wait_for(sent, timeout=40, message=f"not sent:\n{celery_worker.log()[-3000:]}")
    email = next(d for d in body["deliveries"] if d["channel"] == "email")
    assert email["attempt_log"][0]["outcome"] == "accepted"
    assert email["provider_reference"]
    states = [e["state"] for e in email["events"]]
    assert states[0] == "queued" and "sent" in states


def test_dead_letter_replayed_through_the_api_goes_out(
    celery_worker: Any, project: Any, make_key: Any, client_for: Any
) -> None:
    make_template(project)
    connector = _connector(project, "email", permanent_rate=1.0)
    api = _client(project, make_key, client_for)
    response = api.post(
        "/api/v1/notifications", publish_body(to=[{"email": "gone@example.com"}], priority="normal"), format="json"
    )
    notification_id = response.json()["id"]
    dead = wait_for(
        lambda: Delivery.objects.filter(origin_id=str(notification_id), state="failed").first(),
        timeout=40,
        message=f"never dead-lettered:\n{celery_worker.log()[-3000:]}",
    )
    listed = api.get("/api/v1/dead-letters").json()["results"]
    assert [d["id"] for d in listed] == [dead.pk]

    connector.settings = {}
    connector.save()
    response = api.post("/api/v1/dead-letters/replay", {"ids": [dead.pk]}, format="json")
    assert response.status_code == 202

    wait_for(
        lambda: Delivery.objects.filter(pk=dead.pk, state__in=["sent", "delivered"]).exists(),
        timeout=40,
        message=f"replay never sent:\n{celery_worker.log()[-3000:]}",
    )
    assert api.get("/api/v1/dead-letters").json()["results"] == []
    # The delivery no longer reports the error it recovered from; its attempts keep it.
    (replayed,) = api.get(f"/api/v1/notifications/{notification_id}").json()["deliveries"]
    assert replayed["last_error"] == ""
    outcomes = [attempt["outcome"] for attempt in replayed["attempt_log"]]
    assert outcomes[0] == "permanent" and outcomes[-1] == "accepted"
