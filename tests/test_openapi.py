from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.urls import resolve
from drf_spectacular.generators import SchemaGenerator
from openapi_spec_validator import validate

from apps.governance.permissions import required_scope


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


# Words that only make sense inside the code: an operation described with them is leaking a
# developer's note (an inherited docstring) instead of telling an API user what it does.
INTERNAL_WORDS = ("Subclasses", "required_scope", "secret_methods", "ProjectAPIView", "docstring", "``")
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def document() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def view_class_for(path: str) -> type:
    # Every path parameter of the API accepts "1" (ids, slugs, external ids, tokens).
    match = resolve(re.sub(r"\{[^}]+\}", "1", path))
    return match.func.view_class  # type: ignore[attr-defined]


def test_every_operation_has_a_summary_and_a_description_for_api_users(document):
    found = operations(document)
    assert len(found) >= 50
    for path, method, operation in found:
        where = f"{method.upper()} {path}"
        assert operation.get("summary", "").strip(), f"{where} has no summary"
        description = operation.get("description", "")
        assert len(description.strip()) >= 40, f"{where} has no real description: {description!r}"
        for word in INTERNAL_WORDS:
            assert word not in description, f"{where} describes itself with the internal word {word!r}"
            assert word not in operation["summary"], f"{where} summary has the internal word {word!r}"


def test_every_operation_names_the_keys_its_view_lets_in(document):
    for path, method, operation in operations(document):
        view = view_class_for(path)
        scope = required_scope(view, method.upper())
        description = operation["description"]
        where = f"{method.upper()} {path}"
        if scope == "*":
            assert "any valid key" in description, where
        else:
            assert f"`{scope}`" in description, f"{where} needs {scope!r} but its description does not say so"
        secret_only = method.upper() in getattr(view, "secret_methods", ())
        assert ("secret_key_required" in description) == secret_only, (
            f"{where}: the description {'omits' if secret_only else 'claims'} the secret-key rule"
        )
