"""The API process's WSGI app (config.api_wsgi) answers exactly what the full stack answers.

/api/v1/ runs through ``TIDINGS_API_MIDDLEWARE`` only; every request here is sent both to
that chain and to Django's handler with the full ``MIDDLEWARE``, and the two answers
(status, headers, body) must be the same, ids aside.
"""

from __future__ import annotations

import io
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from apps.core.api_app import ApiFirstApplication, MiddlewareListWSGIHandler
from apps.governance.selectors import api_key_cache_clear
from apps.governance.throttling import _reserved
from tests.notifications.conftest import make_template, publish_body

pytestmark = pytest.mark.django_db

Answer = tuple[int, dict[str, str], bytes]


@pytest.fixture
def apps() -> Iterator[tuple[WSGIHandler, MiddlewareListWSGIHandler]]:
    # As Django's test client does: the test's transaction owns the connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler(), MiddlewareListWSGIHandler(settings.TIDINGS_API_MIDDLEWARE)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def call(app: Any, method: str, path: str, body: bytes = b"", **headers: str) -> Answer:
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "testserver",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        **headers,
    }
    started: list[tuple[str, list[tuple[str, str]]]] = []
    result = app(environ, lambda status, response_headers, exc_info=None: started.append((status, response_headers)))
    content = b"".join(result)
    if hasattr(result, "close"):
        result.close()
    status, response_headers = started[0]
    return int(status.split()[0]), dict(response_headers), content


def same(full: Answer, lean: Answer) -> Answer:
    def normal(answer: Answer) -> Answer:
        status, headers, body = answer
        headers = {k: re.sub(r"\d+", "N", v) for k, v in headers.items()}
        return status, headers, re.sub(rb'"id": ?\d+', b'"id":N', body)

    assert normal(lean) == normal(full)
    return lean


def both(apps: tuple[Any, Any], method: str, path: str, body: bytes = b"", **headers: str) -> Answer:
    full, lean = apps
    return same(call(full, method, path, body, **headers), call(lean, method, path, body, **headers))


@pytest.fixture
def key(project: Any, make_key: Any) -> str:
    make_template(project)
    from apps.subscribers.models import Subscriber

    Subscriber.objects.create(project=project, external_id="ada", email="ada@example.com")
    return make_key(project, "secret")[1]


def body(**overrides: Any) -> bytes:
    return json.dumps(publish_body(**overrides)).encode()


def test_the_lean_chain_is_a_subset_of_the_full_one_in_the_same_order() -> None:
    lean = settings.TIDINGS_API_MIDDLEWARE
    assert [m for m in settings.MIDDLEWARE if m in lean] == lean


def test_publish_is_accepted_alike(apps: Any, key: str) -> None:
    status, headers, content = both(apps, "POST", "/api/v1/notifications", body(), HTTP_AUTHORIZATION=f"Bearer {key}")
    assert status == 202
    assert headers["Location"].startswith("/api/v1/notifications/")
    assert headers["Content-Length"] == str(len(content))
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert "Set-Cookie" not in headers


@pytest.mark.parametrize(
    ("case", "status"),
    [
        ("no key", 401),
        ("unknown key", 401),
        ("malformed authorization", 401),
        ("public key lacks scope", 403),
        ("invalid body", 422),
        ("unknown subscriber", 422),
        ("malformed json", 400),
        ("not json", 415),
        ("too large", 413),
        ("bad content length", 400),
        ("bad idempotency key", 400),
        ("unknown path", 404),
        ("unknown path, GET", 404),
        ("wrong method", 405),
    ],
)
def test_refusals_are_answered_alike(apps: Any, key: str, project: Any, make_key: Any, case: str, status: int) -> None:
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    method, path, content = "POST", "/api/v1/notifications", body()
    if case == "no key":
        auth = {}
    elif case == "unknown key":
        auth = {"HTTP_AUTHORIZATION": "Bearer sk_" + "x" * 43}
    elif case == "malformed authorization":
        auth = {"HTTP_AUTHORIZATION": "Basic abc"}
    elif case == "public key lacks scope":
        auth = {"HTTP_AUTHORIZATION": f"Bearer {make_key(project, 'public')[1]}"}
    elif case == "invalid body":
        content = body(channels=["email", "email"])
    elif case == "unknown subscriber":
        content = body(to=["nobody"])
    elif case == "malformed json":
        content = b'{"template": '
    elif case == "not json":
        auth["CONTENT_TYPE"] = "text/plain"
    elif case == "too large":
        auth["CONTENT_LENGTH"] = str(settings.TIDINGS_API_MAX_BODY_BYTES + 1)
    elif case == "bad content length":
        auth["CONTENT_LENGTH"] = "many"
    elif case == "bad idempotency key":
        auth["HTTP_IDEMPOTENCY_KEY"] = "x" * 300
    elif case == "unknown path":
        path = "/api/v1/no-such-thing"
    elif case == "unknown path, GET":
        method, path = "GET", "/api/v1/no-such-thing"
    elif case == "wrong method":
        method = "PUT"
    answer = both(apps, method, path, content, **auth)
    assert answer[0] == status, answer
    assert answer[1]["Content-Type"] == "application/problem+json", answer


def test_throttling_is_answered_alike(apps: Any, project: Any, make_key: Any) -> None:
    make_template(project)
    limited = make_key(project, "secret")[1]
    from apps.governance.models import ApiKey

    ApiKey.objects.filter(project=project).update(rate_limit_per_minute=1)
    api_key_cache_clear()
    _reserved.clear()
    full, lean = apps
    auth = {"HTTP_AUTHORIZATION": f"Bearer {limited}"}
    assert call(full, "GET", "/api/v1/notifications/1", **auth)[0] == 404  # the minute's one request
    refused_full = call(full, "GET", "/api/v1/notifications/1", **auth)
    refused_lean = call(lean, "GET", "/api/v1/notifications/1", **auth)
    refused_full[1]["Retry-After"] = refused_lean[1]["Retry-After"] = "N"
    same(
        (*refused_full[:2], re.sub(rb"\d+", b"N", refused_full[2])),
        (*refused_lean[:2], re.sub(rb"\d+", b"N", refused_lean[2])),
    )
    assert refused_lean[0] == 429 and json.loads(refused_lean[2])["code"] == "rate_limited"


def test_idempotent_replays_are_answered_alike(apps: Any, key: str) -> None:
    full, lean = apps
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    first = call(full, "POST", "/api/v1/notifications", body(), HTTP_IDEMPOTENCY_KEY="k-full", **auth)
    first_lean = call(lean, "POST", "/api/v1/notifications", body(), HTTP_IDEMPOTENCY_KEY="k-lean", **auth)
    same(first, first_lean)
    replay = call(full, "POST", "/api/v1/notifications", body(), HTTP_IDEMPOTENCY_KEY="k-full", **auth)
    replay_lean = call(lean, "POST", "/api/v1/notifications", body(), HTTP_IDEMPOTENCY_KEY="k-lean", **auth)
    assert same(replay, replay_lean)[1]["Idempotent-Replayed"] == "true"
    assert replay[2] == first[2] and replay_lean[2] == first_lean[2]
    other = body(data={"other": 1})
    reused = both(apps, "POST", "/api/v1/notifications", other, HTTP_IDEMPOTENCY_KEY="k-full", **auth)
    assert reused[0] == 422


def test_the_api_first_app_sends_every_other_path_through_the_full_stack(apps: Any, key: str) -> None:
    full, lean = apps
    seen: list[str] = []

    def lean_spy(environ: dict, start_response: Any) -> Any:
        seen.append(environ["PATH_INFO"])
        return lean(environ, start_response)

    app = ApiFirstApplication(lean_spy, full)  # type: ignore[arg-type]
    # The console needs sessions and user authentication: it redirects to its login page.
    status, headers, _ = call(app, "GET", "/console/")
    assert status == 302 and "/console/login" in headers["Location"]
    _, login_headers, _ = call(app, "GET", "/console/login/")
    assert "csrftoken" in login_headers.get("Set-Cookie", "")
    status, _, content = call(app, "POST", "/api/v1/notifications", body(), HTTP_AUTHORIZATION=f"Bearer {key}")
    assert status == 202 and b'"state":"accepted"' in content
    assert seen == ["/api/v1/notifications"]


def test_the_api_handler_remembers_resolved_paths(apps: Any, key: str) -> None:
    from apps.core.api_app import ApiWSGIHandler, _resolve

    handler = ApiWSGIHandler(settings.TIDINGS_API_MIDDLEWARE)
    _resolve.cache_clear()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    for _ in range(3):
        assert call(handler, "POST", "/api/v1/notifications", body(), **auth)[0] == 202
    assert call(handler, "GET", "/api/v1/no-such-thing", **auth)[0] == 404
    info = _resolve.cache_info()
    assert (info.hits, info.misses) == (2, 2)


def test_a_connection_the_server_hung_up_on_is_noticed_without_a_query() -> None:
    import time

    import psycopg

    from apps.core.api_app import server_hung_up

    params = {k: v for k, v in connection_params().items() if v}
    with psycopg.connect(**params, autocommit=True) as doomed, psycopg.connect(**params, autocommit=True) as other:
        assert not server_hung_up(doomed)
        other.execute("SELECT pg_terminate_backend(%s)", [doomed.info.backend_pid])
        deadline = time.monotonic() + 5
        while not server_hung_up(doomed) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server_hung_up(doomed)


def connection_params() -> dict[str, Any]:
    from django.db import connection

    db = connection.settings_dict
    return {
        "host": db["HOST"],
        "port": db["PORT"],
        "user": db["USER"],
        "password": db["PASSWORD"],
        "dbname": db["NAME"],
    }
