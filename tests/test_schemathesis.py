"""The published OpenAPI document against the API's real answers, operation by operation.

Schemathesis reads the live document at /api/schema/ from the API's own WSGI application
and, for every operation, sends schema-valid and schema-violating requests with a secret
key of a fresh project (real PostgreSQL and Redis, in this test's transaction). Every
answer must be no server error, a documented status with its documented media type and
shape, and every request that breaks the schema must be refused. Bounded and derandomized:
25 examples per operation, a fixed seed, no example database.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from apps.core.api_app import api_first_application

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


@schemathesis.serializer("application/x-ndjson")
def _ndjson_body(ctx: Any, value: Any) -> bytes:
    # The import upload documents its raw bodies as binary: send the drawn bytes as they are.
    return value if isinstance(value, bytes) else str(value).encode()


schema = schemathesis.openapi.from_wsgi("/api/schema/", api_first_application())
schema.config.generation.update(modes=list(schemathesis.GenerationMode), max_examples=25, deterministic=True)


@pytest.fixture
def secret_key(project: Any, make_key: Any) -> str:
    return make_key(project, "secret")[1]


@pytest.fixture(autouse=True)
def _connection_kept_across_requests() -> Iterator[None]:
    # The application runs in this thread, inside the test's transaction; like Django's
    # test client, keep the handler from closing that connection when a request ends.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=25,
    deadline=timedelta(seconds=10),
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_its_schema_says(case: Any, secret_key: str) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {secret_key}"}, checks=CHECKS)
