from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command
from openapi_spec_validator import validate


@pytest.mark.django_db
def test_openapi_document_is_valid_and_has_no_warnings(tmp_path):
    target = tmp_path / "schema.yaml"
    # --fail-on-warn turns any drf-spectacular warning (an unannotated view, a guessed
    # type) into a failure, so the published contract never silently degrades.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    document = yaml.safe_load(target.read_text())
    validate(document)
    assert document["openapi"].startswith("3.")
    assert "/api/v1/me" in document["paths"]
    assert "ApiKey" in document["components"]["securitySchemes"]


@pytest.mark.django_db
def test_schema_and_docs_are_served(client):
    assert client.get("/api/schema/").status_code == 200
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()
