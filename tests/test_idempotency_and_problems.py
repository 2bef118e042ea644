from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.idempotency import idempotency_records_sweep
from apps.core.models import IdempotencyRecord
from tests import urls_probe

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.urls_probe")]


@pytest.fixture(autouse=True)
def _reset_calls():
    urls_probe.CALLS.clear()


def post(client, body, key=None, **extra):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post("/api/v1/probe/write", body, format="json", **headers, **extra)


def test_same_key_same_body_replays_the_stored_answer(secret_client):
    first = post(secret_client, {"name": "a"}, key="k-1")
    second = post(secret_client, {"name": "a"}, key="k-1")
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert second["Idempotent-Replayed"] == "true"
    assert len(urls_probe.CALLS) == 1


def test_same_key_other_body_is_422(secret_client):
    post(secret_client, {"name": "a"}, key="k-2")
    response = post(secret_client, {"name": "b"}, key="k-2")
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "idempotency_key_reused"
    assert len(urls_probe.CALLS) == 1


def test_duplicate_while_first_is_running_is_409(secret_client, project):
    import hashlib

    fingerprint = hashlib.sha256(b'POST /api/v1/probe/write\n{"name":"a"}').hexdigest()
    IdempotencyRecord.objects.create(
        project=project, key="k-3", fingerprint=fingerprint, expires_at=timezone.now() + timedelta(hours=1)
    )
    response = post(secret_client, {"name": "a"}, key="k-3")
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_in_progress"
    assert response["Retry-After"] == "1"
    assert urls_probe.CALLS == []


def test_a_refused_request_leaves_no_record_and_can_be_retried(secret_client):
    failed = post(secret_client, {"name": "a", "fail": True}, key="k-4")
    assert failed.status_code == 422
    assert not IdempotencyRecord.objects.filter(key="k-4").exists()
    ok = post(secret_client, {"name": "a"}, key="k-4")
    assert ok.status_code == 201


def test_keys_are_scoped_per_project(secret_client, other_secret_client):
    assert post(secret_client, {"name": "a"}, key="shared").status_code == 201
    assert post(other_secret_client, {"name": "zzz"}, key="shared").status_code == 201
    assert len(urls_probe.CALLS) == 2


def test_expired_records_are_swept_and_key_reusable(secret_client):
    post(secret_client, {"name": "a"}, key="k-5")
    IdempotencyRecord.objects.filter(key="k-5").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert idempotency_records_sweep() == 1
    assert post(secret_client, {"name": "b"}, key="k-5").status_code == 201


def test_abandoned_in_progress_record_is_taken_over(secret_client, project):
    post(secret_client, {"name": "a"}, key="k-6")
    IdempotencyRecord.objects.filter(key="k-6").update(
        state="in_progress", created_at=timezone.now() - timedelta(minutes=10)
    )
    assert post(secret_client, {"name": "a"}, key="k-6").status_code == 201
    assert len(urls_probe.CALLS) == 2


def test_overlong_idempotency_key_is_400(secret_client):
    response = post(secret_client, {"name": "a"}, key="x" * 300)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_idempotency_key"
    assert urls_probe.CALLS == []


def test_validation_error_names_the_field(secret_client):
    response = post(secret_client, {"name": "x" * 50})
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "validation_error"
    assert body["errors"][0]["field"] == "name"
    assert body["detail"].startswith("name:")


def test_non_json_body_is_415(secret_client):
    response = secret_client.post("/api/v1/probe/write", "name=a", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_malformed_json_is_400(secret_client):
    response = secret_client.post("/api/v1/probe/write", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "malformed_body"


def test_body_over_the_limit_is_413_before_the_view_runs(secret_client, settings):
    settings.TIDINGS_API_MAX_BODY_BYTES = 1000
    response = secret_client.post(
        "/api/v1/probe/write", '{"name": "' + "a" * 2000 + '"}', content_type="application/json"
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert urls_probe.CALLS == []


def test_other_projects_object_is_404(secret_client, other_project, make_key):
    foreign, _ = make_key(other_project, "secret")
    response = secret_client.get(f"/api/v1/probe/keys/{foreign.pk}")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


def test_own_object_is_found(project, make_key, client_for):
    own, raw = make_key(project, "secret")
    assert client_for(raw).get(f"/api/v1/probe/keys/{own.pk}").json()["id"] == own.pk


def test_unknown_path_under_api_is_not_a_server_error(secret_client):
    assert secret_client.get("/api/v1/nope").status_code == 404


@pytest.mark.parametrize("debug", [True, False])
def test_an_unexpected_error_is_a_500_problem_without_internals(secret_client, settings, caplog, debug):
    # Under DEBUG (`DJANGO_DEBUG=1 make run`) Django would otherwise answer with its HTML debug page.
    settings.DEBUG = debug
    secret_client.raise_request_exception = False
    with caplog.at_level("ERROR", logger="django.request"):
        response = secret_client.get("/api/v1/probe/crash")

    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "internal_error"
    assert "hunter2" not in response.content.decode() and "Traceback" not in response.content.decode()
    # The traceback goes to the log instead.
    assert any("hunter2" in str(record.exc_info[1]) for record in caplog.records if record.exc_info)


def test_a_plain_views_404_under_debug_stays_a_404_problem(client, settings):
    settings.DEBUG = True
    response = client.get("/api/v1/probe/plain-missing")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/problem+json")
