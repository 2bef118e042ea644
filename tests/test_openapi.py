from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
import yaml
from django.core.management import call_command
from django.urls import resolve
from openapi_spec_validator import validate

from apps.governance.permissions import required_scope
from apps.workflows.api.graph_schema import GRAPH_EXAMPLE, UntranslatableSchema, openapi_schema
from apps.workflows.graph import structure_issues
from apps.workflows.nodes.base import NodeType, node_types, schema_validator
from tests.openapi import api_document, schema_errors


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


# Words that only make sense inside the code: an operation described with them is leaking a
# developer's note (an inherited docstring) instead of telling an API user what it does.
INTERNAL_WORDS = ("Subclasses", "required_scope", "secret_methods", "ProjectAPIView", "docstring", "``")
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture
def document() -> dict[str, Any]:
    return api_document()


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


def test_every_registered_node_type_is_a_variant_of_the_graph_node(document):
    schemas = document["components"]["schemas"]
    node = schemas["WorkflowNode"]
    assert node["discriminator"]["propertyName"] == "type"
    mapping = node["discriminator"]["mapping"]
    assert set(mapping) == set(node_types)
    assert sorted(variant["$ref"] for variant in node["oneOf"]) == sorted(mapping.values())
    for type_name, kind in node_types.items():
        variant = schemas[mapping[type_name].rsplit("/", 1)[1]]
        assert variant["properties"]["type"]["enum"] == [type_name]
        config = schemas[variant["properties"]["config"]["$ref"].rsplit("/", 1)[1]]
        expected = openapi_schema(kind.schema)
        assert config == {"description": config["description"], **expected}
    graph = schemas["WorkflowGraph"]
    assert graph["properties"]["nodes"]["items"] == {"$ref": "#/components/schemas/WorkflowNode"}
    assert graph["properties"]["edges"]["items"] == {"$ref": "#/components/schemas/WorkflowEdge"}
    # Saving a draft checks only its shape, and the body says so: a schema stricter than
    # the server would call every unfinished draft invalid input.
    body = schemas["WorkflowInputRequest"]["properties"]["graph"]
    assert body == {"$ref": "#/components/schemas/WorkflowDraftGraph"}


class EchoNode(NodeType):
    type = "echo_back"
    label = "Echo"
    description = "Repeats the subscriber's name back."
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["mode"],
        "properties": {"mode": {"const": "loud"}},
    }


def test_a_newly_registered_node_type_appears_in_the_document_by_itself(monkeypatch):
    monkeypatch.setitem(node_types._items, EchoNode.type, EchoNode())
    document = api_document()
    schemas = document["components"]["schemas"]
    assert schemas["WorkflowNode"]["discriminator"]["mapping"]["echo_back"] == "#/components/schemas/EchoBackNode"
    assert schemas["EchoBackNode"]["required"] == ["id", "type", "config"]
    # OpenAPI 3.0 has no const: it is written as a one-value enum.
    assert schemas["EchoBackNodeConfig"]["properties"]["mode"] == {"enum": ["loud"]}
    graph = {"nodes": [{"id": "e", "type": "echo_back", "config": {"mode": "loud"}}], "edges": []}
    assert schema_errors("WorkflowGraph", graph, document) == []
    validate(document)


def test_a_node_schema_with_no_openapi_translation_fails_loudly():
    with pytest.raises(UntranslatableSchema, match="prefixItems"):
        openapi_schema({"type": "array", "prefixItems": [{"type": "string"}]})


def test_the_example_graph_is_publishable_and_valid_against_the_component(document):
    graph = document["components"]["schemas"]["WorkflowGraph"]
    assert graph["example"] == GRAPH_EXAMPLE
    assert [node["type"] for node in GRAPH_EXAMPLE["nodes"]] == [
        "start",
        "condition",
        "email",
        "push",
        "join",
        "wait",
        "end",
    ]
    assert schema_errors("WorkflowGraph", GRAPH_EXAMPLE, document) == []
    assert jsonschema_errors(document, "WorkflowGraph", GRAPH_EXAMPLE) == []
    # Every rule of publishing but the project's own templates and tags.
    assert structure_issues(GRAPH_EXAMPLE) == []
    validate(document)


@pytest.mark.parametrize("type_name", list(node_types))
def test_the_graph_component_judges_each_node_config_as_publishing_does(document, type_name):
    kind = node_types.get(type_name)
    wrong = {"surely_not_a_config_key": 1}
    for config, valid in ((kind.example_config, True), (wrong, False)):
        assert schema_validator(kind.schema).is_valid(config) is valid
        graph = {"nodes": [{"id": "n", "type": type_name, "config": config}], "edges": []}
        assert (schema_errors("WorkflowGraph", graph, document) == []) is valid, (type_name, config)
        assert (jsonschema_errors(document, "WorkflowGraph", graph) == []) is valid, (type_name, config)


def test_every_wait_mode_is_accepted_by_the_graph_component(document):
    # drf-spectacular's enum hook, run over these components, would fold the five single-value
    # ``mode`` enums of the wait config into one component, refusing four of the modes.
    configs = [
        {"mode": "duration", "hours": 3},
        {"mode": "time_of_day", "time": "09:00"},
        {"mode": "weekday", "weekday": "monday", "time": "09:00"},
        {"mode": "day_of_month", "day": 1, "time": "09:00"},
        {"mode": "datetime", "at": "2027-01-01T09:00:00Z"},
    ]
    for config in configs:
        graph = {"nodes": [{"id": "w", "type": "wait", "config": config}], "edges": []}
        assert schema_errors("WorkflowGraph", graph, document) == [], config


def test_an_unknown_node_type_or_a_missing_config_is_refused_by_the_component(document):
    unknown = {"nodes": [{"id": "x", "type": "teleport"}], "edges": []}
    assert schema_errors("WorkflowGraph", unknown, document)
    no_template = {"nodes": [{"id": "x", "type": "email"}], "edges": []}
    assert schema_errors("WorkflowGraph", no_template, document)
    # A draft holds either: only its shape is checked when it is saved.
    assert schema_errors("WorkflowDraftGraph", unknown, document) == []
    assert schema_errors("WorkflowDraftGraph", no_template, document) == []


def jsonschema_errors(document: dict[str, Any], name: str, instance: Any) -> list[str]:
    """The same check with plain ``jsonschema`` (Draft 2020-12) and the document's components."""
    schema = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(instance)]
