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
    templates = {
        operation["operationId"]
        for path, operations in document["paths"].items()
        if path.startswith(("/api/v1/templates", "/api/v1/layouts"))
        for operation in operations.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    assert templates == {
        "templates_list",
        "templates_create",
        "templates_get",
        "templates_versions_list",
        "templates_versions_create",
        "templates_version_get",
        "templates_version_publish",
        "templates_preview",
        "layouts_list",
        "layouts_create",
        "layouts_get",
        "layouts_update",
    }


@pytest.mark.django_db
def test_schema_and_docs_are_served(client):
    assert client.get("/api/schema/").status_code == 200
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()
