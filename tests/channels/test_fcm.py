"""Push through firebase-admin: one app per connector, token errors, quota, batching."""

from __future__ import annotations

import json

import firebase_admin
import pytest

from apps.delivery.channels.base import ConfigError, Outcome, adapters
from apps.delivery.channels.fcm import FCMAdapter
from tests.channels.cases import FCM_CASE, fcm, fcm_error, service_account
from tests.channels.fakes import Request, Response, fake_server
from tests.channels.helpers import make_adapter, message

CONTENT = {"title": "Hi", "body": "There", "platform": "ios"}

# Push adapters deactivate unregistered devices, so these touch the database.
pytestmark = pytest.mark.django_db


def answering(send_answer):  # type: ignore[no-untyped-def]
    def respond(request: Request) -> Response:
        if request.route == "/token":
            return fcm("aux", request)
        return send_answer(request)

    return respond


def adapter_for(url: str, project_id: str = "tidings-test", connector_id: int = 7):  # type: ignore[no-untyped-def]
    adapter = make_adapter("push:fcm", {"service_account": service_account(url, project_id)}, {"api_url": url})
    object.__setattr__(adapter.config, "connector_id", connector_id)
    return adapter


def test_invalid_registration_token_is_permanent_and_marks_the_destination_invalid() -> None:
    answer = Response(
        400, fcm_error(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token")
    )
    with fake_server(answering(lambda request: answer)) as server:
        [result] = adapter_for(server.url).send_batch([message("push", "garbage", CONTENT)])
    assert result.outcome == Outcome.PERMANENT
    assert result.destination_invalid
    assert result.code == "INVALID_ARGUMENT"


def test_quota_exceeded_is_throttled_and_keeps_retry_after() -> None:
    answer = Response(
        429, fcm_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", "QUOTA_EXCEEDED"), {"Retry-After": "30"}
    )
    with fake_server(answering(lambda request: answer)) as server:
        [result] = adapter_for(server.url).send_batch([message("push", "tok", CONTENT)])
    assert result.outcome == Outcome.RETRYABLE
    assert result.throttled
    assert result.retry_after == 30


def test_unavailable_keeps_retry_after_and_is_not_retried_inside_the_library() -> None:
    with fake_server(FCM_CASE.responder()) as server:
        [result] = adapter_for(server.url).send_batch([message("push", "retry-token", CONTENT)])
    assert result.outcome == Outcome.RETRYABLE
    assert result.retry_after == 12
    assert sum(1 for r in server.requests if r.route.endswith("messages:send")) == 1


def test_each_connector_has_its_own_firebase_app_and_project() -> None:
    with fake_server(FCM_CASE.responder()) as server:
        adapter_for(server.url, "project-a", connector_id=501).send_batch([message("push", "t1", CONTENT)])
        adapter_for(server.url, "project-b", connector_id=502).send_batch([message("push", "t2", CONTENT)])
    routes = [r.route for r in server.requests if r.route.endswith("messages:send")]
    assert routes == ["/v1/projects/project-a/messages:send", "/v1/projects/project-b/messages:send"]
    assert firebase_admin.get_app("501").project_id == "project-a"
    assert firebase_admin.get_app("502").project_id == "project-b"
    sent = json.loads(next(r for r in server.requests if "project-a" in r.route).body)
    assert sent["message"]["token"] == "t1"
    assert sent["message"]["apns"]["headers"]["apns-priority"] == "10"


def test_batches_larger_than_the_provider_limit_are_split_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FCMAdapter, "max_batch_size", 2)
    with fake_server(FCM_CASE.responder()) as server:
        results = adapter_for(server.url).send_batch(
            [
                message("push", f"{kind}-token-{n}", CONTENT)
                for n, kind in enumerate(["ok", "perm", "ok", "retry", "ok"])
            ]
        )
    assert [r.outcome for r in results] == [
        Outcome.ACCEPTED,
        Outcome.PERMANENT,
        Outcome.ACCEPTED,
        Outcome.RETRYABLE,
        Outcome.ACCEPTED,
    ]


def test_token_endpoint_refusing_the_service_account_is_a_permanent_auth_failure() -> None:
    def respond(request: Request) -> Response:
        if request.route == "/token":
            return Response(400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
        return fcm("ok", request)

    with fake_server(respond) as server:
        results = adapter_for(server.url, connector_id=503).send_batch(
            [message("push", "a", CONTENT), message("push", "b", CONTENT)]
        )
    assert [r.code for r in results] == ["auth_failed", "auth_failed"]
    assert all(r.outcome == Outcome.PERMANENT for r in results)


@pytest.mark.parametrize(
    "raw",
    ["not json", json.dumps({"type": "authorized_user"}), {"type": "service_account", "project_id": "x"}],
)
def test_a_file_that_is_not_a_service_account_is_refused_at_save(raw: object) -> None:
    with pytest.raises(ConfigError) as error:
        adapters.get("push:fcm").validate_config({"service_account": raw}, {})
    assert error.value.field == "service_account"


def test_service_account_with_a_broken_private_key_is_refused() -> None:
    broken = {**service_account("http://127.0.0.1:1"), "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n"}
    with pytest.raises(ConfigError):
        adapters.get("push:fcm").validate_config({"service_account": broken}, {})


def test_unregistered_token_deactivates_the_device_in_this_project_only(project, other_project) -> None:  # type: ignore[no-untyped-def]
    from apps.subscribers.models import Device, Subscriber

    mine = Device.objects.create(
        project=project,
        subscriber=Subscriber.objects.create(project=project, external_id="u1"),
        platform="android",
        token="perm-token-1",
    )
    theirs = Device.objects.create(
        project=other_project,
        subscriber=Subscriber.objects.create(project=other_project, external_id="u1"),
        platform="android",
        token="perm-token-1",
    )
    with fake_server(FCM_CASE.responder()) as server:
        adapter = make_adapter("push:fcm", {"service_account": service_account(server.url)}, {"api_url": server.url})
        object.__setattr__(adapter.config, "project_id", project.pk)
        [result] = adapter.send_batch([message("push", "perm-token-1", CONTENT)])
    assert result.destination_invalid
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.active, theirs.active) == (False, True)
    assert "UNREGISTERED" in mine.deactivated_reason
