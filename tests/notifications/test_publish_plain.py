"""The publish endpoint's plain path answers exactly what DRF's path answers.

Every request is sent twice: once as it is served (the plain path answers the everyday
request itself) and once with the plain path off (DRF answers everything). Status,
headers in their order, and body must be the same, ids aside; the plain path must have
answered where it is meant to, and handed over everywhere else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.governance.models import ApiKey
from apps.governance.selectors import api_key_cache_clear
from apps.governance.throttling import _reserved
from apps.notifications.api.views import NotificationCollectionView
from apps.notifications.models import Notification
from tests.notifications.conftest import make_template, publish_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/notifications"


@pytest.fixture
def answered_plainly(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    seen: list[bool] = []
    original = NotificationCollectionView.publish_plain

    def spy(self: NotificationCollectionView, request: Any) -> Any:
        answer = original(self, request)
        seen.append(answer is not None)
        return answer

    monkeypatch.setattr(NotificationCollectionView, "publish_plain", spy)
    return seen


def drf_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(NotificationCollectionView, "publish_plain", lambda self, request: None)


def normal(response: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    headers = [(name, re.sub(r"\d+", "N", value)) for name, value in response.items()]
    return response.status_code, headers, re.sub(rb'"id": ?\d+', b'"id":N', response.content)


def both(
    client: Any, monkeypatch: pytest.MonkeyPatch, seen: list[bool], body: bytes, **extra: Any
) -> tuple[tuple[int, list, bytes], bool]:
    content_type = extra.pop("content_type", "application/json")
    path = extra.pop("path", URL)
    plain = client.post(path, body, content_type=content_type, **extra)
    answered = bool(seen and seen[-1])
    with monkeypatch.context() as patch:
        drf_only(patch)
        drf = client.post(path, body, content_type=content_type, **extra)
    assert normal(plain) == normal(drf)
    return normal(plain), answered


def encoded(**overrides: Any) -> bytes:
    return json.dumps(publish_body(**overrides)).encode()


def test_an_accepted_publish_is_answered_plainly_and_alike(
    secret_client: Any, welcome: Any, ada: Any, answered_plainly: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    (status, headers, body), answered = both(secret_client, monkeypatch, answered_plainly, encoded())
    assert status == 202 and answered
    assert ("Location", "/api/vN/notifications/N") in headers and ("Allow", "POST, OPTIONS") in headers
    assert body == b'{"id":N,"state":"accepted"}'
    assert Notification.objects.count() == 2


def test_the_plain_path_is_one_statement(secret_client: Any, welcome: Any, ada: Any, answered_plainly: list) -> None:
    secret_client.post(URL, encoded(), content_type="application/json")  # warms key + template caches
    with CaptureQueriesContext(connection) as queries:
        response = secret_client.post(URL, encoded(), content_type="application/json")
    assert response.status_code == 202 and answered_plainly == [True, True]
    sql = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(sql) == 1 and "notifications_outboxevent" in sql[0], sql


@pytest.mark.parametrize(
    ("case", "status", "plain"),
    [
        ("unknown template", 422, True),
        ("unknown version", 422, True),
        ("unknown subscriber", 422, True),
        ("channel the template lacks", 422, True),
        ("bad raw destination", 422, True),
        ("unicode data", 202, True),
        ("duplicate channel", 422, False),
        ("unknown field", 202, False),
        ("NaN in data", 400, False),
        ("not utf-8", 400, False),
        ("json with a charset", 202, False),
        ("indented answer asked for", 202, False),
        ("a format asked for", 202, False),
        ("no key", 401, False),
        ("unknown key", 401, False),
        ("malformed authorization", 401, False),
        ("public key lacks the scope", 403, False),
        ("not json", 415, False),
    ],
)
def test_every_other_answer_is_the_same(
    client_for: Callable[[str], Any],
    make_key: Any,
    project: Any,
    ada: Any,
    answered_plainly: list[bool],
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    status: int,
    plain: bool,
) -> None:
    make_template(project, content={"email": {"subject": "Hi {{ name }}", "text": "Hi", "html": "Hi"}})
    client = client_for(make_key(project, "secret")[1])
    body, extra = encoded(), {}
    if case == "unknown template":
        body = encoded(template="nope")
    elif case == "unknown version":
        body = encoded(template="welcome@9")
    elif case == "unknown subscriber":
        body = encoded(to=["ada", "nobody"])
    elif case == "channel the template lacks":
        body = encoded(channels=["email", "sms"])
    elif case == "bad raw destination":
        body = encoded(to=[{"email": "not-an-address"}])
    elif case == "unicode data":
        body = encoded(data={"name": "Zoë \u2028 ☃"})
    elif case == "duplicate channel":
        body = encoded(channels=["email", "email"])
    elif case == "unknown field":
        body = encoded(colour="blue")
    elif case == "NaN in data":
        body = b'{"template": "welcome", "to": ["ada"], "channels": ["email"], "data": {"n": NaN}}'
    elif case == "not utf-8":
        body = b'{"template": "welcome", "to": ["ada"], "channels": ["email"], "data": {"name": "Zo\xeb"}}'
    elif case == "json with a charset":
        extra["content_type"] = "application/json; charset=utf-8"
    elif case == "indented answer asked for":
        extra["HTTP_ACCEPT"] = "application/json; indent=4"
    elif case == "a format asked for":
        extra["path"] = URL + "?format=json"
    elif case == "no key":
        client = client_for("x")
        client.credentials()
    elif case == "unknown key":
        client = client_for("sk_" + "x" * 43)
    elif case == "malformed authorization":
        client = client_for("x")
        client.credentials(HTTP_AUTHORIZATION="Basic abc")
    elif case == "public key lacks the scope":
        client = client_for(make_key(project, "public")[1])
    elif case == "not json":
        extra["content_type"] = "text/plain"
    (got, headers, content), answered = both(client, monkeypatch, answered_plainly, body, **extra)
    assert got == status, content
    assert answered == plain
    if status >= 400:
        assert ("Content-Type", "application/problem+json") in headers


def test_a_scheduled_publish_goes_through_drf_alike(
    secret_client: Any, welcome: Any, ada: Any, answered_plainly: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    when = (timezone.now() + timedelta(days=1)).isoformat()
    (status, _, _), answered = both(secret_client, monkeypatch, answered_plainly, encoded(send_at=when))
    assert status == 202 and not answered


def test_an_over_budget_key_is_refused_alike(
    client_for: Callable[[str], Any], make_key: Any, project: Any, welcome: Any, ada: Any, monkeypatch: Any
) -> None:
    key, raw = make_key(project, "secret")
    ApiKey.objects.filter(pk=key.pk).update(rate_limit_per_minute=2)
    api_key_cache_clear()
    _reserved.clear()
    client = client_for(raw)
    assert client.post(URL, encoded(), content_type="application/json").status_code == 202  # plain
    with monkeypatch.context() as patch:
        drf_only(patch)
        assert client.post(URL, encoded(), content_type="application/json").status_code == 202
        drf = client.post(URL, encoded(), content_type="application/json")
    plain = client.post(URL, encoded(), content_type="application/json")
    assert drf.status_code == plain.status_code == 429
    assert [name for name, _ in drf.items()] == [name for name, _ in plain.items()]
    assert json.loads(plain.content)["code"] == "rate_limited"


def test_idempotent_replays_through_the_plain_path(
    secret_client: Any, welcome: Any, ada: Any, answered_plainly: list[bool]
) -> None:
    first = secret_client.post(URL, encoded(), content_type="application/json", HTTP_IDEMPOTENCY_KEY="p-1")
    again = secret_client.post(URL, encoded(), content_type="application/json", HTTP_IDEMPOTENCY_KEY="p-1")
    assert answered_plainly == [True]  # the replay never reached the view
    assert first.status_code == again.status_code == 202 and first.content == again.content
    assert again["Location"] == first["Location"] and again["Idempotent-Replayed"] == "true"
    assert Notification.objects.count() == 1


def test_an_unexpected_error_is_still_a_500_problem(
    secret_client: Any, welcome: Any, ada: Any, monkeypatch: pytest.MonkeyPatch, answered_plainly: list[bool]
) -> None:
    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr("apps.notifications.api.views.notification_publish", broken)
    secret_client.raise_request_exception = False
    response = secret_client.post(URL, encoded(), content_type="application/json")
    assert response.status_code == 500 and response["Content-Type"] == "application/problem+json"
    assert b"boom" not in response.content


def test_a_body_over_djangos_own_limit_is_answered_alike(
    secret_client: Any, welcome: Any, ada: Any, answered_plainly: list[bool], monkeypatch: Any, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10  # below the API's own limit: DRF's path decides
    (status, _, _), answered = both(secret_client, monkeypatch, answered_plainly, encoded())
    assert status == 413 and not answered
