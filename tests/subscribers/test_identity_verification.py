"""Public keys never read a person's data, and change an identified subscriber only with
the subscriber hash: HMAC-SHA256 of the external id under the project's identity secret."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

from apps.governance.identity import identity_secret_reveal
from apps.subscribers.models import Device, Subscriber, SubscriberTag
from tests.conftest import _client_for
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

IDENTIFY = "/api/v1/subscribers/identify"
IDS_ONLY = {"id", "external_id", "anonymous_id"}


def subscriber_hash(project: Any, external_id: str) -> str:
    secret = identity_secret_reveal(project=project)
    return hmac.new(secret.encode(), external_id.encode(), hashlib.sha256).hexdigest()


@pytest.fixture
def ada(project: Any) -> Subscriber:
    return Subscriber.objects.create(
        project=project,
        external_id="ada",
        email="ada@example.com",
        phone="+351912345678",
        attributes={"plan": "gold"},
    )


def post(client: Any, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, body, format="json")


def refused(response: Any) -> None:
    assert response.status_code == 403, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "identity_verification_required"


def test_a_public_identify_answers_only_ids(public_client: Any, ada: Subscriber) -> None:
    response = post(public_client, IDENTIFY, {"external_id": "ada"})
    assert response.status_code == 200
    assert response.json() == {"id": ada.pk, "external_id": "ada", "anonymous_id": None}


def test_a_secret_identify_still_answers_the_profile(secret_client: Any, ada: Subscriber) -> None:
    body = post(secret_client, IDENTIFY, {"external_id": "ada"}).json()
    assert body["email"] == "ada@example.com" and body["attributes"] == {"plan": "gold"}


@pytest.mark.parametrize(
    "change",
    [
        {"email": "mallory@example.com"},
        {"phone": "+15555550100"},
        {"attributes": {"plan": "free"}},
        {"timezone": "Europe/Lisbon"},
        {"locale": "pt-PT"},
        {"email": "ada@example.com"},  # the same value: no oracle for guessing it
    ],
)
def test_a_public_key_cannot_change_an_identified_profile_without_the_hash(
    public_client: Any, ada: Subscriber, change: dict[str, Any]
) -> None:
    refused(post(public_client, IDENTIFY, {"external_id": "ada", **change}))
    refused(post(public_client, IDENTIFY, {"external_id": "ada", "subscriber_hash": "0" * 64, **change}))
    stored = Subscriber.objects.get(pk=ada.pk)
    assert (stored.email, stored.phone, stored.attributes, stored.timezone, stored.locale) == (
        "ada@example.com",
        "+351912345678",
        {"plan": "gold"},
        "",
        "",
    )


def test_with_the_hash_a_public_key_updates_the_profile_and_still_reads_nothing(
    public_client: Any, project: Any, ada: Subscriber
) -> None:
    good = subscriber_hash(project, "ada")
    response = post(
        public_client, IDENTIFY, {"external_id": "ada", "email": "ada@new.example", "subscriber_hash": good}
    )
    assert response.status_code == 200, response.content
    assert set(response.json()) == IDS_ONLY
    assert Subscriber.objects.get(pk=ada.pk).email == "ada@new.example"
    # Uppercase hex is the same hash.
    upper = {"external_id": "ada", "locale": "en-GB", "subscriber_hash": good.upper()}
    assert post(public_client, IDENTIFY, upper).status_code == 200


def test_a_public_key_sets_contact_fields_on_a_subscriber_it_creates(public_client: Any) -> None:
    response = post(public_client, IDENTIFY, {"external_id": "new", "email": "new@example.com"})
    assert response.status_code == 200 and set(response.json()) == IDS_ONLY
    assert Subscriber.objects.get(external_id="new").email == "new@example.com"
    # Once it exists, it is an identified subscriber like any other.
    refused(post(public_client, IDENTIFY, {"external_id": "new", "email": "other@example.com"}))


def test_a_public_key_cannot_merge_an_anonymous_profile_into_someone_without_the_hash(
    public_client: Any, project: Any, ada: Subscriber
) -> None:
    post(public_client, IDENTIFY, {"anonymous_id": "anon-m", "phone": "+15555550100"})
    post(public_client, "/api/v1/devices", {"anonymous_id": "anon-m", "platform": "ios", "token": "mallory-phone"})
    refused(post(public_client, IDENTIFY, {"external_id": "ada", "anonymous_id": "anon-m"}))
    assert Device.objects.get(token="mallory-phone").subscriber.anonymous_id == "anon-m"
    assert Subscriber.objects.get(pk=ada.pk).anonymous_id is None

    good = subscriber_hash(project, "ada")
    merged = post(public_client, IDENTIFY, {"external_id": "ada", "anonymous_id": "anon-m", "subscriber_hash": good})
    assert merged.status_code == 200
    assert Device.objects.get(token="mallory-phone").subscriber_id == ada.pk


def test_an_anonymous_id_that_now_belongs_to_an_identified_subscriber_reveals_nothing(
    public_client: Any, project: Any, ada: Subscriber
) -> None:
    good = subscriber_hash(project, "ada")
    post(public_client, IDENTIFY, {"external_id": "ada", "anonymous_id": "anon-a", "subscriber_hash": good})
    answer = post(public_client, IDENTIFY, {"anonymous_id": "anon-a"})
    assert answer.status_code == 200
    assert answer.json() == {"id": ada.pk, "external_id": None, "anonymous_id": "anon-a"}
    refused(post(public_client, IDENTIFY, {"anonymous_id": "anon-a", "email": "mallory@example.com"}))
    assert Subscriber.objects.get(pk=ada.pk).email == "ada@example.com"


def test_a_public_key_registers_a_device_to_an_identified_subscriber_only_with_the_hash(
    public_client: Any, project: Any, ada: Subscriber
) -> None:
    device = {"external_id": "ada", "platform": "ios", "token": "mallory-phone"}
    refused(post(public_client, "/api/v1/devices", device))
    assert not Device.objects.exists()
    registered = post(public_client, "/api/v1/devices", {**device, "subscriber_hash": subscriber_hash(project, "ada")})
    assert registered.status_code == 201
    assert registered.json()["subscriber"] == {"external_id": "ada", "anonymous_id": None}


def test_a_public_key_tags_an_identified_subscriber_only_with_the_hash(
    public_client: Any, project: Any, ada: Subscriber
) -> None:
    refused(post(public_client, "/api/v1/subscribers/ada/tags", {"add": ["vip"]}))
    assert not SubscriberTag.objects.exists()
    good = subscriber_hash(project, "ada")
    tagged = post(public_client, "/api/v1/subscribers/ada/tags", {"add": ["vip"], "subscriber_hash": good})
    assert tagged.status_code == 200 and tagged.json()["tags"] == ["vip"]


def test_a_restricted_key_under_the_public_ceiling_is_held_to_the_same_rules(
    make_key: Any, project: Any, ada: Subscriber
) -> None:
    client = _client_for(make_key(project, "restricted", ceiling="public", scopes=["subscribers:write"])[1])
    assert set(post(client, IDENTIFY, {"external_id": "ada"}).json()) == IDS_ONLY
    refused(post(client, IDENTIFY, {"external_id": "ada", "email": "mallory@example.com"}))


def test_a_hash_without_an_external_id_is_422(public_client: Any) -> None:
    response = post(public_client, IDENTIFY, {"anonymous_id": "anon", "subscriber_hash": "ab" * 32})
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "subscriber_hash"
    assert not Subscriber.objects.exists()


def test_the_console_shows_and_rotates_the_identity_secret(client: Any, project: Any, owner: Any, ada: Any) -> None:
    client.force_login(owner)
    page = client.get("/console/keys/")
    secret = identity_secret_reveal(project=project)
    assert secret.encode() in page.content
    old_hash = subscriber_hash(project, "ada")
    assert client.post("/console/keys/identity-secret/rotate/").status_code == 302
    assert identity_secret_reveal(project=project) != secret
    viewer = MembershipFactory(organization=project.organization, role="viewer").user
    client.force_login(viewer)
    assert identity_secret_reveal(project=project).encode() not in client.get("/console/keys/").content
    assert client.post("/console/keys/identity-secret/rotate/").status_code == 403
    assert old_hash != subscriber_hash(project, "ada")


def test_the_old_hash_stops_working_after_rotation(public_client: Any, project: Any, ada: Subscriber) -> None:
    from apps.governance.identity import identity_secret_rotate

    old = subscriber_hash(project, "ada")
    identity_secret_rotate(project=project)
    refused(post(public_client, IDENTIFY, {"external_id": "ada", "email": "a@b.example", "subscriber_hash": old}))


def test_the_openapi_document_describes_the_hash_and_the_rule() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/v1/subscribers/identify"]["post"]
    assert "HMAC-SHA256" in operation["description"] and "identity_verification_required" in operation["description"]
    body = schema["components"]["schemas"]["IdentifyInRequest"]["properties"]
    assert "HMAC-SHA256" in body["subscriber_hash"]["description"]
    for path in ("/api/v1/devices", "/api/v1/subscribers/{external_id}/tags"):
        request = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert "subscriber_hash" in schema["components"]["schemas"][request.rsplit("/", 1)[1]]["properties"]
