from __future__ import annotations

from typing import Any

import pytest

from apps.subscribers.models import Device, Subscriber, TagEvent


def _identify(client: Any, **body: Any) -> Any:
    return client.post("/api/v1/subscribers/identify", body, format="json")


def test_public_key_may_identify_tag_and_register_devices(public_client: Any, project: Any) -> None:
    from apps.governance.identity import identity_secret_reveal, subscriber_hash_for

    r = _identify(public_client, external_id="u1", email="u1@example.com", timezone="Europe/Lisbon")
    assert r.status_code == 200, r.json()
    assert r.json()["external_id"] == "u1"
    proof = subscriber_hash_for(identity_secret_reveal(project=project), "u1")
    r = public_client.post(
        "/api/v1/subscribers/u1/tags", {"add": ["vip"], "remove": [], "subscriber_hash": proof}, format="json"
    )
    assert r.status_code == 200 and r.json()["tags"] == ["vip"]
    device = {"external_id": "u1", "platform": "ios", "token": "tok", "subscriber_hash": proof}
    r = public_client.post("/api/v1/devices", device, format="json")
    assert r.status_code == 201
    assert public_client.delete("/api/v1/devices/tok").status_code == 204
    assert not Device.objects.exists()


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("get", "/api/v1/subscribers", "missing_scope"),
        ("get", "/api/v1/subscribers/u1", "missing_scope"),
        ("patch", "/api/v1/subscribers/u1", "secret_key_required"),
        ("delete", "/api/v1/subscribers/u1", "secret_key_required"),
        ("get", "/api/v1/subscribers/u1/export", "missing_scope"),
        ("post", "/api/v1/segments", "secret_key_required"),
        ("post", "/api/v1/subscribers/import", "secret_key_required"),
    ],
)
def test_public_key_cannot_read_or_administer(public_client: Any, method: str, path: str, code: str) -> None:
    _identify(public_client, external_id="u1")
    r = getattr(public_client, method)(path, {}, format="json")
    assert r.status_code == 403
    assert r.json()["code"] == code
    assert Subscriber.objects.get(external_id="u1").erased_at is None


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"external_id": "u1", "timezone": "Nowhere/City"}, "timezone", "invalid_timezone"),
        ({"external_id": "u1", "email": "bad@"}, "email", "invalid_email"),
        ({"external_id": "u1", "phone": "12345"}, "phone", "invalid_phone"),
        ({"email": "a@example.com"}, "external_id", "invalid"),
    ],
)
def test_identify_bad_input_is_422_and_changes_nothing(secret_client: Any, body: dict, field: str, code: str) -> None:
    r = _identify(secret_client, **body)
    assert r.status_code == 422
    problem = r.json()
    assert problem["errors"][0]["field"] == field
    if code != "invalid":
        assert problem["code"] == code
    assert not Subscriber.objects.exists()


def test_bad_tags_are_422_and_change_nothing(secret_client: Any) -> None:
    _identify(secret_client, external_id="u1")
    for body in ({"add": ["x" * 65]}, {"add": ["a\nb"]}, {"add": ["a"], "remove": ["a"]}):
        r = secret_client.post("/api/v1/subscribers/u1/tags", body, format="json")
        assert r.status_code == 422, body
    assert not TagEvent.objects.exists()


def test_another_projects_key_gets_404(secret_client: Any, other_secret_client: Any) -> None:
    _identify(secret_client, external_id="u1")
    rules = {"op": "and", "groups": [{"none": ["x"]}]}
    r = secret_client.post("/api/v1/segments", {"name": "All", "rules": rules}, format="json")
    segment_id = r.json()["id"]
    for method, path in [
        ("get", "/api/v1/subscribers/u1"),
        ("patch", "/api/v1/subscribers/u1"),
        ("delete", "/api/v1/subscribers/u1"),
        ("get", "/api/v1/subscribers/u1/export"),
        ("post", "/api/v1/subscribers/u1/tags"),
        ("get", f"/api/v1/segments/{segment_id}"),
        ("get", f"/api/v1/segments/{segment_id}/subscribers"),
        ("delete", f"/api/v1/segments/{segment_id}"),
    ]:
        r = getattr(other_secret_client, method)(path, {}, format="json")
        assert r.status_code == 404, (method, path, r.status_code)
        assert r["Content-Type"] == "application/problem+json"
    assert other_secret_client.get("/api/v1/subscribers").json()["results"] == []
    assert other_secret_client.get("/api/v1/segments").json()["results"] == []


def test_device_token_of_another_project_stays_separate(public_client: Any, other_project: Any, make_key: Any) -> None:
    from tests.conftest import _client_for

    other = _client_for(make_key(other_project, "public")[1])
    for client, ext in ((public_client, "mine"), (other, "theirs")):
        r = client.post("/api/v1/devices", {"external_id": ext, "platform": "android", "token": "T"}, format="json")
        assert r.status_code == 201
    assert other.delete("/api/v1/devices/T").status_code == 204
    assert Device.objects.get(token="T").subscriber.external_id == "mine"
    assert other.delete("/api/v1/devices/T").status_code == 404


def test_list_paginates_with_a_cursor_and_filters(secret_client: Any) -> None:
    for i in range(5):
        _identify(secret_client, external_id=f"u{i}", email=f"u{i}@example.com")
    secret_client.post("/api/v1/subscribers/u3/tags", {"add": ["vip"]}, format="json")
    seen, cursor = [], None
    while True:
        r = secret_client.get("/api/v1/subscribers", {"limit": 2, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200
        seen += [row["external_id"] for row in r.json()["results"]]
        cursor = r.json()["next_cursor"]
        if not cursor:
            break
    assert seen == ["u0", "u1", "u2", "u3", "u4"]
    assert [x["external_id"] for x in secret_client.get("/api/v1/subscribers?tag=vip").json()["results"]] == ["u3"]
    by_email = secret_client.get("/api/v1/subscribers?email=U2@example.com").json()["results"]
    assert [x["external_id"] for x in by_email] == ["u2"]
    assert secret_client.get("/api/v1/subscribers?created_after=2999-01-01T00:00:00Z").json()["results"] == []
    assert secret_client.get("/api/v1/subscribers?cursor=garbage").status_code == 422


def test_segment_crud_counts_and_members(secret_client: Any) -> None:
    for ext in ("a", "b", "c"):
        _identify(secret_client, external_id=ext)
    secret_client.post("/api/v1/subscribers/a/tags", {"add": ["vip"]}, format="json")
    rules = {"op": "and", "groups": [{"any": ["vip"]}]}
    r = secret_client.post("/api/v1/segments", {"name": "VIP", "rules": rules}, format="json")
    assert r.status_code == 201 and r.json()["count"] == 1
    sid = r.json()["id"]
    r = secret_client.post("/api/v1/subscribers/b/tags", {"add": ["vip"]}, format="json")
    assert r.json()["segments"] == [{"id": sid, "name": "VIP"}]
    members = secret_client.get(f"/api/v1/segments/{sid}/subscribers").json()["results"]
    assert [m["external_id"] for m in members] == ["a", "b"]
    r = secret_client.patch(
        f"/api/v1/segments/{sid}", {"rules": {"op": "and", "groups": [{"none": ["vip"]}]}}, format="json"
    )
    assert r.json()["count"] == 1
    bad = {"op": "and", "groups": [{"all": ["vip"]}, {"none": ["vip"]}]}
    r = secret_client.patch(f"/api/v1/segments/{sid}", {"rules": bad}, format="json")
    assert r.status_code == 422 and r.json()["code"] == "contradictory_segment_predicate"
    assert secret_client.get(f"/api/v1/segments/{sid}").json()["count"] == 1
    assert secret_client.post("/api/v1/segments", {"name": "VIP", "rules": rules}, format="json").status_code == 409
    assert secret_client.delete(f"/api/v1/segments/{sid}").status_code == 204
    assert secret_client.get(f"/api/v1/segments/{sid}").status_code == 404


def test_patch_updates_fields_and_preferences(secret_client: Any) -> None:
    _identify(secret_client, external_id="u1", attributes={"a": 1, "b": 2})
    r = secret_client.patch(
        "/api/v1/subscribers/u1",
        {"locale": "pt-PT", "attributes": {"b": None, "c": 3}, "preferences": [{"channel": "sms", "opted_out": True}]},
        format="json",
    )
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["locale"] == "pt-PT" and body["attributes"] == {"a": 1, "c": 3}
    assert body["preferences"] == [{"channel": "sms", "category": "", "opted_out": True}]
    r = secret_client.patch(
        "/api/v1/subscribers/u1", {"preferences": [{"channel": "fax", "opted_out": True}]}, format="json"
    )
    assert r.status_code == 422


def test_delete_erases_personal_data_and_export_returns_everything(secret_client: Any) -> None:
    _identify(secret_client, external_id="u1", anonymous_id="anon", email="p@example.com", attributes={"name": "P"})
    secret_client.post("/api/v1/subscribers/u1/tags", {"add": ["vip"]}, format="json")
    secret_client.post("/api/v1/devices", {"external_id": "u1", "platform": "web", "token": "tok"}, format="json")
    export = secret_client.get("/api/v1/subscribers/u1/export").json()
    assert export["email"] == "p@example.com" and export["tags"] == ["vip"]
    assert export["anonymous_ids"] == ["anon"] and export["devices"][0]["token"] == "tok"
    assert export["tag_events"][0]["tag"] == "vip"

    pk = Subscriber.objects.get(external_id="u1").pk
    assert secret_client.delete("/api/v1/subscribers/u1").status_code == 204
    husk = Subscriber.objects.get(pk=pk)
    assert husk.erased_at is not None
    assert (husk.external_id, husk.anonymous_id, husk.email, husk.attributes) == (None, None, "", {})
    assert not Device.objects.exists() and not TagEvent.objects.exists()
    assert secret_client.get("/api/v1/subscribers/u1").status_code == 404
    # The same person identifying again is a new subscriber.
    assert _identify(secret_client, external_id="u1").json()["id"] != pk
