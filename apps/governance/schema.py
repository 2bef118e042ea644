"""OpenAPI wiring: the API key scheme, the problems every operation can answer, and only
/api/v1/ in the published contract."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from apps.core.api_schema import problem_responses

# What the stack in front of every view answers, whatever the view does: the body-size
# middleware (400 for a Content-Length that is no number, 413 over the limit, 422 for a
# NUL in the query string), the key (401), its scope (403) and its budget (429).
EVERY_OPERATION = (400, 401, 403, 413, 422, 429)
# Parsing a body adds a malformed body (400) and a media type no parser reads (415).
WITH_BODY = (415,)
# A POST may carry an Idempotency-Key whose first request is still running (409).
POST = (409,)
# An object named in the path may not exist in the key's project (or hold a NUL).
WITH_PATH_OBJECT = (404,)

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apps.governance.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        # One wording, in SPECTACULAR_SETTINGS (which also lists the scheme for every path).
        return dict(settings.SPECTACULAR_SETTINGS["APPEND_COMPONENTS"]["securitySchemes"]["ApiKey"])


class ProjectAPISchema(AutoSchema):
    """The schema class of the API (``DEFAULT_SCHEMA_CLASS``): the answers a view declares,
    plus, for a ``ProjectAPIView``, every problem status the shared stack can answer.

    A view declares only what it adds itself (a 404 for an object its body names, a 409
    for a state change it refuses); what every key-authenticated request can meet is
    listed here once, from the operation's method, path and body.
    """

    def answered_problems(self) -> tuple[int, ...]:
        from apps.governance.api.base import ProjectAPIView  # the views import this app's models

        if not isinstance(self.view, ProjectAPIView):
            return ()
        statuses = list(EVERY_OPERATION)
        if self.method in _BODY_METHODS and self.get_request_serializer() is not None:
            statuses += WITH_BODY
        if self.method == "POST":
            statuses += POST
        if "{" in self.path:
            statuses += WITH_PATH_OBJECT
        return tuple(sorted(statuses))

    def _map_serializer_field(self, field: Any, direction: Any, bypass_extensions: bool = False) -> dict[str, Any]:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        # drf-spectacular documents the length bounds of a ListField but not those of a
        # nested serializer with many=True (a batch's messages), which DRF enforces alike.
        if isinstance(field, serializers.ListSerializer) and schema.get("type") == "array":
            if field.min_length is not None:
                schema.setdefault("minItems", field.min_length)
            if field.max_length is not None:
                schema.setdefault("maxItems", field.max_length)
        return schema

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        # Not get_response_serializers: @extend_schema(responses=...) replaces that one.
        bodies = super()._get_response_bodies(direction)
        for status, response in problem_responses(*self.answered_problems(), always=False).items():
            code = str(status[0])
            if code not in bodies:
                bodies[code] = self._get_response_for_code(response, code, list(status[1:]), direction)
        return bodies


def only_public_api(endpoints: list[tuple[str, str, str, Any]], **_: Any) -> list[tuple[str, str, str, Any]]:
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/api/v1/")]
