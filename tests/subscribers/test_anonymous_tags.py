"""An app tags a visitor before login by anonymous id; the tags follow the merge."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

from apps.subscribers.models import Device, Subscriber, TagEvent

pytestmark = pytest.mark.django_db


def test_a_public_key_tags_an_anonymous_visitor_and_the_tags_reach_the_merge(
    public_client: Any, secret_client: Any
) -> None:
    public_client.post("/api/v1/subscribers/identify", {"anonymous_id": "anon-1"}, format="json")
    tagged = public_client.post(
        "/api/v1/subscribers/anon-1/tags?id_type=anonymous", {"add": ["browsed-shoes"]}, format="json"
    )
    assert tagged.status_code == 200, tagged.content
    assert tagged.json()["tags"] == ["browsed-shoes"]
    device = public_client.post(
        "/api/v1/devices", {"anonymous_id": "anon-1", "platform": "web", "token": "web-push-1"}, format="json"
    )
    assert device.status_code == 201
    assert device.json()["subscriber"] == {"external_id": None, "anonymous_id": "anon-1"}

    # Login: the server identifies the visitor (a secret key needs no subscriber hash).
    merged = secret_client.post(
        "/api/v1/subscribers/identify", {"external_id": "u1", "anonymous_id": "anon-1"}, format="json"
    )
    assert merged.status_code == 200 and merged.json()["tags"] == ["browsed-shoes"]
    survivor = Subscriber.objects.get(external_id="u1")
    assert Device.objects.get(token="web-push-1").subscriber_id == survivor.pk
    assert list(TagEvent.objects.filter(subscriber=survivor).values_list("tag_name", flat=True)) == ["browsed-shoes"]


def test_tagging_an_unknown_anonymous_id_is_404(public_client: Any) -> None:
    response = public_client.post("/api/v1/subscribers/nobody/tags?id_type=anonymous", {"add": ["x"]}, format="json")
    assert response.status_code == 404 and response.json()["errors"][0]["field"] == "anonymous_id"


def test_an_unknown_id_type_is_422(public_client: Any) -> None:
    response = public_client.post("/api/v1/subscribers/anon-1/tags?id_type=email", {"add": ["x"]}, format="json")
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "id_type"


def test_an_anonymous_id_merged_into_someone_is_tagged_by_their_external_id(
    public_client: Any, secret_client: Any
) -> None:
    secret_client.post("/api/v1/subscribers/identify", {"external_id": "u1", "anonymous_id": "anon-1"}, format="json")
    response = public_client.post("/api/v1/subscribers/anon-1/tags?id_type=anonymous", {"add": ["x"]}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "identity_verification_required"
    assert not TagEvent.objects.exists()
    # A secret key may: the alias resolves to the identified subscriber.
    ok = secret_client.post("/api/v1/subscribers/anon-1/tags?id_type=anonymous", {"add": ["x"]}, format="json")
    assert ok.status_code == 200 and Subscriber.objects.get(external_id="u1").subscriber_tags.count() == 1


def test_the_openapi_document_names_the_id_type() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/v1/subscribers/{external_id}/tags"]["post"]
    id_type = next(p for p in operation["parameters"] if p["name"] == "id_type")
    assert id_type["in"] == "query" and id_type["schema"]["enum"] == ["external", "anonymous"]
