"""The published OpenAPI contract describes the subscribers API as it really answers."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

EXPECTED = {
    "/api/v1/subscribers": {"get"},
    "/api/v1/subscribers/identify": {"post"},
    "/api/v1/subscribers/import": {"post"},
    "/api/v1/subscribers/{external_id}": {"get", "patch", "delete"},
    "/api/v1/subscribers/{external_id}/tags": {"post"},
    "/api/v1/subscribers/{external_id}/export": {"get"},
    "/api/v1/devices": {"post"},
    "/api/v1/devices/{token}": {"delete"},
    "/api/v1/segments": {"get", "post"},
    "/api/v1/segments/{segment_id}": {"get", "patch", "delete"},
    "/api/v1/segments/{segment_id}/subscribers": {"get"},
    "/api/v1/imports/{job_id}": {"get"},
}
HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    return schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]


def test_every_subscribers_path_is_published_with_exactly_its_methods(schema):
    for path, methods in EXPECTED.items():
        assert path in schema["paths"], path
        assert set(schema["paths"][path]) & HTTP_METHODS == methods, path


def test_identify_request_body_lists_external_id_and_anonymous_id(schema):
    body = schema["paths"]["/api/v1/subscribers/identify"]["post"]["requestBody"]["content"]["application/json"]
    properties = resolve(schema, body["schema"])["properties"]
    assert {"external_id", "anonymous_id", "email", "attributes"} <= set(properties)


def test_responses_are_typed_documents_not_free_form_objects(schema):
    detail = schema["paths"]["/api/v1/subscribers/{external_id}"]["get"]["responses"]
    document = resolve(schema, detail["200"]["content"]["application/json"]["schema"])
    assert {"id", "external_id", "tags", "devices", "segments", "preferences"} <= set(document["properties"])
    problem = resolve(schema, detail["404"]["content"]["application/problem+json"]["schema"])
    assert {"type", "title", "status", "code", "detail"} <= set(problem["properties"])

    page = schema["paths"]["/api/v1/subscribers"]["get"]
    assert {"cursor", "limit", "tag", "segment"} <= {p["name"] for p in page["parameters"]}
    page_doc = resolve(schema, page["responses"]["200"]["content"]["application/json"]["schema"])
    assert set(page_doc["properties"]) == {"results", "next_cursor"}


def test_import_accepts_a_multipart_file_or_a_raw_csv_or_ndjson_body(schema):
    operation = schema["paths"]["/api/v1/subscribers/import"]["post"]
    content = operation["requestBody"]["content"]
    assert set(content) == {"multipart/form-data", "text/csv", "application/x-ndjson"}
    upload = resolve(schema, content["multipart/form-data"]["schema"])
    assert upload["properties"]["file"]["format"] == "binary"
    assert content["text/csv"]["schema"]["format"] == "binary"
    assert "Location" in operation["responses"]["202"]["headers"]


def test_operation_ids_are_unique_and_tags_group_the_api(schema):
    seen: list[str] = []
    tags: dict[str, str] = {}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method in HTTP_METHODS:
                seen.append(operation["operationId"])
                if path in EXPECTED:
                    tags[operation["operationId"]] = operation["tags"][0]
    assert len(seen) == len(set(seen))
    assert tags["subscribers_list"] == "subscribers"
    assert tags["segments_list"] == "segments"
    assert tags["device_register"] == "devices"
    assert tags["subscribers_import"] == "imports"
    assert "ChannelEnum" in schema["components"]["schemas"]
