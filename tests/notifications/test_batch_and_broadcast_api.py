"""Batch message APIs (≤500 a call) and broadcasts to a segment, a tag or a list."""

from __future__ import annotations

from typing import Any

import pytest

from apps.delivery.models import Delivery
from apps.notifications.broadcasts import broadcast_enqueue
from apps.notifications.models import Broadcast
from apps.subscribers.models import Segment, SegmentMembership, Subscriber, SubscriberTag, Tag
from tests.notifications.conftest import row_counts

pytestmark = pytest.mark.django_db


def test_email_batch_makes_one_delivery_per_message(secret_client: Any, welcome: Any, ada: Any) -> None:
    body = {
        "messages": [
            {"to": {"email": "grace@example.com"}, "subject": "Hi", "text": "Hello", "key": "order-1"},
            {"to": "ada", "template": "welcome", "data": {"name": "Ada"}},
        ]
    }
    response = secret_client.post("/api/v1/messages/email/batch", body, format="json")

    assert response.status_code == 202, response.content
    ids = [m["deliveries"][0] for m in response.json()["messages"]]
    first, second = Delivery.objects.get(pk=ids[0]), Delivery.objects.get(pk=ids[1])
    assert first.content == {"subject": "Hi", "text": "Hello", "html": ""}
    assert first.delivery_key == "message:order-1:email:grace@example.com"
    assert second.destination == "ada@example.com" and second.template_version_id == welcome.pk

    again = secret_client.post("/api/v1/messages/email/batch", {"messages": body["messages"][:1]}, format="json")
    assert again.json()["messages"][0]["deliveries"] == [ids[0]]  # same key, same delivery


def test_push_batch_goes_to_every_active_device(secret_client: Any, project: Any, ada: Any) -> None:
    from apps.subscribers.models import Device

    Device.objects.create(project=project, subscriber=ada, platform="ios", token="tok-ada-ios-2")
    response = secret_client.post(
        "/api/v1/messages/push/batch", {"messages": [{"to": "ada", "title": "Hi", "body": "There"}]}, format="json"
    )
    assert response.status_code == 202
    assert len(response.json()["messages"][0]["deliveries"]) == 2


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"to": {"email": "nope"}, "subject": "s", "text": "t"}, "messages[1].to"),
        ({"to": {"phone": "+351912345678"}, "subject": "s", "text": "t"}, "messages[1].to"),
        ({"to": "ghost", "subject": "s", "text": "t"}, "messages[1].to"),
        ({"to": "ada", "template": "missing"}, "messages[1].template"),
        ({"to": "ada"}, "messages.1"),
        (
            {"to": {"email": "b@example.com"}, "subject": "s", "html": "<p>x</p><img src=x onerror=alert(1)>"},
            "messages[1].html",
        ),
    ],
)
def test_an_invalid_message_refuses_the_whole_batch(
    secret_client: Any, welcome: Any, ada: Any, message: dict, field: str
) -> None:
    good = {"to": {"email": "ok@example.com"}, "subject": "s", "text": "t"}
    before = row_counts()
    response = secret_client.post("/api/v1/messages/email/batch", {"messages": [good, message]}, format="json")
    assert response.status_code == 422, response.content
    assert field in {e["field"] for e in response.json()["errors"]}
    assert row_counts() == before


def test_batches_over_500_are_refused(secret_client: Any) -> None:
    messages = [{"to": {"email": f"u{i}@example.com"}, "subject": "s", "text": "t"} for i in range(501)]
    response = secret_client.post("/api/v1/messages/email/batch", {"messages": messages}, format="json")
    assert response.status_code == 422
    assert Delivery.objects.count() == 0


def test_batch_needs_the_messages_send_scope(client_for: Any, make_key: Any, project: Any) -> None:
    _, raw = make_key(project, "restricted", ceiling="secret", scopes=["notifications:publish"])
    response = client_for(raw).post(
        "/api/v1/messages/email/batch",
        {"messages": [{"to": {"email": "a@example.com"}, "subject": "s", "text": "t"}]},
        format="json",
    )
    assert response.status_code == 403


def _audience(project: Any) -> list[Subscriber]:
    people = [
        Subscriber.objects.create(project=project, external_id=f"p{i}", email=f"p{i}@example.com") for i in range(3)
    ]
    Subscriber.objects.create(project=project, external_id="no-mail")
    tag = Tag.objects.create(project=project, name="beta")
    for person in people[:2]:
        SubscriberTag.objects.create(project=project, subscriber=person, tag=tag)
    return people


def test_broadcast_to_a_tag_fans_out_on_the_bulk_lane(secret_client: Any, project: Any, welcome: Any) -> None:
    people = _audience(project)
    response = secret_client.post(
        "/api/v1/broadcasts",
        {"template": "welcome", "channels": ["email"], "tag": "beta", "data": {"name": "you"}},
        format="json",
    )
    assert response.status_code == 202, response.content
    broadcast_id = response.json()["id"]

    assert broadcast_enqueue(project=project, broadcast_id=broadcast_id) == 2
    deliveries = Delivery.objects.filter(origin_kind="broadcast", origin_id=str(broadcast_id))
    assert {d.subscriber_id for d in deliveries} == {people[0].pk, people[1].pk}
    assert {d.lane for d in deliveries} == {"bulk"}
    assert all(d.context == {"name": "you"} for d in deliveries)
    assert Broadcast.objects.get(pk=broadcast_id).enqueued == {"email": 2}
    assert broadcast_enqueue(project=project, broadcast_id=broadcast_id) == 0
    state = secret_client.get(f"/api/v1/broadcasts/{broadcast_id}").json()
    assert state["state"] == "enqueued" and state["enqueued"] == {"email": 2}


def test_broadcast_to_a_segment_and_to_a_list(secret_client: Any, project: Any, welcome: Any) -> None:
    people = _audience(project)
    segment = Segment.objects.create(project=project, name="vip", rules={"all": ["beta"]})
    SegmentMembership.objects.create(project=project, segment=segment, subscriber=people[2])
    seg = secret_client.post(
        "/api/v1/broadcasts", {"template": "welcome", "channels": ["email"], "segment": segment.pk}, format="json"
    )
    lst = secret_client.post(
        "/api/v1/broadcasts",
        {"template": "welcome", "channels": ["email"], "subscribers": ["p0", "no-mail"]},
        format="json",
    )
    assert broadcast_enqueue(project=project, broadcast_id=seg.json()["id"]) == 1
    assert broadcast_enqueue(project=project, broadcast_id=lst.json()["id"]) == 1  # no-mail has no address


def test_broadcast_to_another_projects_segment_is_404_and_stores_nothing(
    secret_client: Any, other_project: Any, welcome: Any
) -> None:
    segment = Segment.objects.create(project=other_project, name="theirs", rules={})
    response = secret_client.post(
        "/api/v1/broadcasts", {"template": "welcome", "channels": ["email"], "segment": segment.pk}, format="json"
    )
    assert response.status_code == 404
    assert Broadcast.objects.count() == 0


def test_another_projects_broadcast_is_404(
    secret_client: Any, other_secret_client: Any, project: Any, welcome: Any
) -> None:
    _audience(project)
    broadcast_id = secret_client.post(
        "/api/v1/broadcasts", {"template": "welcome", "channels": ["email"], "tag": "beta"}, format="json"
    ).json()["id"]
    assert other_secret_client.get(f"/api/v1/broadcasts/{broadcast_id}").status_code == 404


def test_broadcast_needs_exactly_one_audience(secret_client: Any, welcome: Any) -> None:
    response = secret_client.post(
        "/api/v1/broadcasts", {"template": "welcome", "channels": ["email"], "tag": "a", "segment": 1}, format="json"
    )
    assert response.status_code == 422
