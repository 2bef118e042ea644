"""The published OpenAPI document, and validators for its components, for tests."""

from __future__ import annotations

from functools import cache
from typing import Any

from drf_spectacular.generators import SchemaGenerator
from openapi_schema_validator import OAS30Validator


def api_document() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


@cache
def cached_api_document() -> dict[str, Any]:
    return api_document()


def component_validator(name: str, document: dict[str, Any] | None = None) -> Any:
    """An OpenAPI 3.0 validator (``nullable`` and all) for ``#/components/schemas/<name>``,
    resolving references within the document."""
    document = document or cached_api_document()
    return OAS30Validator({"$ref": f"#/components/schemas/{name}", "components": document["components"]})


def schema_errors(name: str, instance: Any, document: dict[str, Any] | None = None) -> list[str]:
    validator = component_validator(name, document)
    return [f"{'/'.join(map(str, e.absolute_path)) or name}: {e.message}" for e in validator.iter_errors(instance)]
