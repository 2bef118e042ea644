"""Hostile and careless input: every refusal is a specific 4xx problem and stores nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apps.campaigns.models import Campaign
from apps.notifications.models import Notification
from apps.subscribers.models import Segment, Subscriber, SubscriberTag
from apps.subscribers.validation import TAGS_PER_REQUEST, TAGS_PER_SUBSCRIBER
from apps.workflows.models import Workflow
from tests.notifications.conftest import make_template, publish_body
from tests.workflows.helpers import chain, node

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


def raw_post(client: Any, path: str, text: str) -> Any:
    return client.post(path, text.encode(), content_type="application/json")


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["code"] == code, body
    return body


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


# --- NUL and lone surrogates in JSON ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"external_id": "u1", "attributes": {"note": "a\\u0000b"}}', "attributes.note"),
        ('{"external_id": "u1", "attributes": {"a\\u0000": 1}}', "attributes"),
        ('{"external_id": "u1\\u0000"}', "external_id"),
        ('{"external_id": "u1", "attributes": {"x": "\\ud800"}}', "attributes.x"),
        ('{"external_id": "u1", "attributes": {"x": ["ok", "\\udfff tail"]}}', "attributes.x[1]"),
    ],
)
def test_nul_and_lone_surrogates_in_an_identify_body_are_422(secret_client: Any, text: str, field: str) -> None:
    body = problem(raw_post(secret_client, "/api/v1/subscribers/identify", text), 422, "invalid_character")
    assert body["errors"][0]["field"] == field
    assert not Subscriber.objects.exists()


@pytest.mark.parametrize("value", ["\\u0000", "\\ud800", "x\\uDBFFy"])
def test_nul_and_lone_surrogates_in_notification_data_are_422(secret_client: Any, project: Any, value: str) -> None:
    make_template(project)
    Subscriber.objects.create(project=project, external_id="ada", email="ada@example.com")
    text = json.dumps(publish_body()).replace('"Ada"', f'"{value}"')
    body = problem(raw_post(secret_client, "/api/v1/notifications", text), 422, "invalid_character")
    assert body["errors"][0]["field"] == "data.name"
    assert not Notification.objects.exists()


def test_an_escaped_surrogate_pair_and_a_literal_backslash_u_are_accepted(secret_client: Any, project: Any) -> None:
    make_template(project)
    Subscriber.objects.create(project=project, external_id="ada", email="ada@example.com")
    text = json.dumps(publish_body()).replace('"Ada"', '"\\ud83d\\ude00 and \\\\u0000 \\\\ud800"')
    response = raw_post(secret_client, "/api/v1/notifications", text)
    assert response.status_code == 202, response.content
    assert Notification.objects.get().data == {"name": "\U0001f600 and \\u0000 \\ud800"}


def test_nul_in_a_query_string_is_422_naming_the_parameter(secret_client: Any) -> None:
    body = problem(secret_client.get("/api/v1/campaigns?q=%00"), 422, "invalid_character")
    assert body["errors"][0]["field"] == "q"
    problem(secret_client.get("/api/v1/subscribers?email=a%00b"), 422, "invalid_character")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/subscribers/a%00b"),
        ("post", "/api/v1/subscribers/a%00b/tags"),
        ("delete", "/api/v1/devices/tok%00en"),
    ],
)
def test_nul_in_a_path_is_404(secret_client: Any, method: str, path: str) -> None:
    problem(getattr(secret_client, method)(path, {}, format="json"), 404, "not_found")


# --- Depth ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "wrap"),
    [
        ("/api/v1/notifications", lambda deep: json.dumps(publish_body()).replace('"Ada"', deep)),
        ("/api/v1/subscribers/identify", lambda deep: '{"external_id": "u1", "attributes": ' + deep + "}"),
        ("/api/v1/segments", lambda deep: '{"name": "deep", "rules": ' + deep + "}"),
        ("/api/v1/workflows", lambda deep: '{"key": "deep", "graph": ' + deep + "}"),
    ],
)
@pytest.mark.parametrize("depth", [33, 10_000])
def test_json_nested_deeper_than_the_limit_is_422_everywhere(
    secret_client: Any, project: Any, path: str, wrap: Any, depth: int
) -> None:
    make_template(project)
    Subscriber.objects.create(project=project, external_id="ada", email="ada@example.com")
    body = problem(raw_post(secret_client, path, wrap(nested(depth))), 422, "json_too_deep")
    assert "32" in body["detail"]
    assert Notification.objects.count() == Segment.objects.count() == Workflow.objects.count() == 0
    assert Subscriber.objects.count() == 1


def test_json_at_the_depth_limit_is_accepted(secret_client: Any, project: Any) -> None:
    make_template(project)
    Subscriber.objects.create(project=project, external_id="ada", email="ada@example.com")
    # The body object, "data", then 30 levels: 32 in all.
    text = json.dumps(publish_body()).replace('"Ada"', nested(30))
    assert raw_post(secret_client, "/api/v1/notifications", text).status_code == 202


# --- Ids, dates, races ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/broadcasts/%C2%B2",
        "/api/v1/notifications/%C2%B2",
        "/api/v1/broadcasts/%D9%A3",
        "/api/v1/notifications/99999999999999999999999",
    ],
)
def test_non_ascii_digits_and_huge_numbers_as_ids_are_404(secret_client: Any, path: str) -> None:
    problem(secret_client.get(path), 404, "not_found")


def test_a_wait_preview_past_the_end_of_the_calendar_is_422(secret_client: Any, project: Any) -> None:
    graph = chain(node("start", "start"), node("later", "wait", mode="duration", days=2), node("end", "end"))
    secret_client.post("/api/v1/workflows", {"key": "w", "graph": graph}, format="json")
    assert secret_client.post("/api/v1/workflows/w/publish").status_code == 201
    url = "/api/v1/workflows/w/versions/1/wait-preview"
    body = problem(secret_client.get(url, {"node": "later", "at": "9999-12-31T23:59:59Z"}), 422, "out_of_range")
    assert body["errors"][0]["field"] == "at"
    assert secret_client.get(url, {"node": "later", "at": "2026-01-01T00:00:00Z"}).status_code == 200


def test_a_segment_patch_that_loses_the_race_to_a_delete_is_404(
    secret_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apps.subscribers.api import segment_views

    rules = {"op": "and", "groups": [{"all": ["vip"]}]}
    created = secret_client.post("/api/v1/segments", {"name": "VIP", "rules": rules}, format="json").json()
    real_get = segment_views.selectors.segment_get

    def found_then_deleted(project: Any, segment_id: int) -> Any:
        segment = real_get(project, segment_id)
        Segment.objects.filter(pk=segment.pk).delete()  # the DELETE commits between read and write
        return segment

    monkeypatch.setattr(segment_views.selectors, "segment_get", found_then_deleted)
    response = secret_client.patch(f"/api/v1/segments/{created['id']}", {"name": "Renamed"}, format="json")
    problem(response, 404, "not_found")
    assert not Segment.objects.exists()


# --- Tags and timezones --------------------------------------------------------------------


def test_more_tags_in_one_request_than_the_limit_is_422_and_stores_nothing(secret_client: Any) -> None:
    secret_client.post("/api/v1/subscribers/identify", {"external_id": "u1"}, format="json")
    for count in (TAGS_PER_REQUEST + 1, 10_000):
        tags = [f"t{i}" for i in range(count)]
        body = problem(
            secret_client.post("/api/v1/subscribers/u1/tags", {"add": tags}, format="json"), 422, "validation_error"
        )
        assert body["errors"][0]["field"] == "add"
    assert not SubscriberTag.objects.exists()
    ok = secret_client.post(
        "/api/v1/subscribers/u1/tags", {"add": [f"t{i}" for i in range(TAGS_PER_REQUEST)]}, format="json"
    )
    assert ok.status_code == 200 and len(ok.json()["tags"]) == TAGS_PER_REQUEST


def test_a_subscriber_holds_at_most_the_tag_limit(secret_client: Any) -> None:
    secret_client.post("/api/v1/subscribers/identify", {"external_id": "u1"}, format="json")
    for start in range(0, TAGS_PER_SUBSCRIBER, TAGS_PER_REQUEST):
        add = [f"t{i}" for i in range(start, min(start + TAGS_PER_REQUEST, TAGS_PER_SUBSCRIBER))]
        assert secret_client.post("/api/v1/subscribers/u1/tags", {"add": add}, format="json").status_code == 200
    over = secret_client.post("/api/v1/subscribers/u1/tags", {"add": ["one-more"]}, format="json")
    body = problem(over, 422, "too_many_tags")
    assert str(TAGS_PER_SUBSCRIBER) in body["detail"]
    assert SubscriberTag.objects.count() == TAGS_PER_SUBSCRIBER
    swap = secret_client.post("/api/v1/subscribers/u1/tags", {"add": ["one-more"], "remove": ["t0"]}, format="json")
    assert swap.status_code == 200 and "one-more" in swap.json()["tags"]


@pytest.mark.parametrize("zone", ["localtime", "Factory", "posixrules", "Europe/Nowhere"])
def test_only_real_iana_zone_names_are_timezones(secret_client: Any, project: Any, zone: str) -> None:
    r = secret_client.post("/api/v1/subscribers/identify", {"external_id": "u1", "timezone": zone}, format="json")
    problem(r, 422, "invalid_timezone")
    assert not Subscriber.objects.exists()
    for good in ("Europe/Lisbon", "UTC", "America/Argentina/Buenos_Aires"):
        r = secret_client.post("/api/v1/subscribers/identify", {"external_id": "u1", "timezone": good}, format="json")
        assert r.status_code == 200, r.content


def test_a_campaign_list_search_still_works(secret_client: Any) -> None:
    assert secret_client.get("/api/v1/campaigns?q=spring").status_code == 200
    assert not Campaign.objects.exists()


# --- what the OpenAPI document promises -------------------------------------------------


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/api/v1/subscribers?tag=", "tag"),
        ("/api/v1/subscribers?cursor=", "cursor"),
        ("/api/v1/dead-letters?origin_kind=", "origin_kind"),
        ("/api/v1/dead-letters?limit=", "limit"),
    ],
)
def test_an_empty_query_parameter_is_422_naming_it_not_ignored(secret_client: Any, path: str, parameter: str) -> None:
    body = problem(secret_client.get(path), 422, "validation_error")
    assert body["errors"][0]["field"] == parameter


@pytest.mark.parametrize(
    "path", ["/api/v1/dead-letters?chanel=sms", "/api/v1/subscribers?limt=5", "/api/v1/templates?limt=5"]
)
def test_an_unknown_query_parameter_is_422_not_a_silent_no_op(secret_client: Any, path: str) -> None:
    body = problem(secret_client.get(path), 422, "validation_error")
    assert "Unknown query parameter" in json.dumps(body)


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        ("/api/v1/subscribers/identify", {"external_id": 7}, "external_id"),
        ("/api/v1/subscribers/identify", {"external_id": "u1", "subscriber_hash": 0}, "subscriber_hash"),
        ("/api/v1/dead-letters/replay", {"error_contains": 0}, "error_contains"),
        ("/api/v1/workflows", {"key": 5}, "key"),
    ],
)
def test_a_number_where_the_schema_says_string_is_422(secret_client: Any, path: str, payload: Any, field: str) -> None:
    body = problem(secret_client.post(path, payload, format="json"), 422, "validation_error")
    assert body["errors"][0]["field"] == field
    assert not Subscriber.objects.exists() and not Workflow.objects.exists()


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        ("/api/v1/workflows", {"key": "w", "allow_reentry": 0}, "allow_reentry"),
        ("/api/v1/workflows", {"key": "w", "allow_reentry": "yes"}, "allow_reentry"),
    ],
)
def test_a_non_boolean_where_the_schema_says_boolean_is_422(
    secret_client: Any, path: str, payload: Any, field: str
) -> None:
    body = problem(secret_client.post(path, payload, format="json"), 422, "validation_error")
    assert body["errors"][0]["field"].startswith(field)
    assert not Subscriber.objects.exists() and not Workflow.objects.exists()


@pytest.mark.parametrize("action", ["start", "pause", "resume", "cancel", "retry"])
def test_every_campaign_control_refuses_a_body_it_cannot_parse(secret_client: Any, project: Any, action: str) -> None:
    make_template(project)
    created = secret_client.post("/api/v1/campaigns", {"name": "A", "template": "welcome"}, format="json")
    assert created.status_code == 201, created.content
    path = f"/api/v1/campaigns/{created.json()['id']}/{action}"
    problem(raw_post(secret_client, path, "{not json"), 400, "malformed_body")
    problem(secret_client.post(path, {"reason": 5}, format="json"), 422, "validation_error")
    assert Campaign.objects.get().state == "draft"


def test_every_error_of_a_problem_names_its_field_or_null(secret_client: Any) -> None:
    r = secret_client.post("/api/v1/workflows", {"key": "w", "graph": {}}, format="json")
    body = problem(r, 422, "invalid_graph")
    assert body["errors"] and all(error["field"] is None for error in body["errors"])
