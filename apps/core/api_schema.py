"""OpenAPI description of the problem+json documents ``apps.core.problems`` writes.

One shape and one helper for every app's ``extend_schema`` responses."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from apps.core.problems import PROBLEM_CONTENT_TYPE


class ProblemErrorOut(serializers.Serializer):
    field = serializers.CharField(allow_null=True, help_text="The input it concerns; null for the request as a whole.")
    message = serializers.CharField()
    code = serializers.CharField()
    node = serializers.CharField(required=False, help_text="A workflow graph issue: the node it concerns.")
    edge = serializers.IntegerField(required=False, help_text="A workflow graph issue: the index of its edge.")


class ProblemOut(serializers.Serializer):
    """An RFC 9457 problem document (application/problem+json)."""

    type = serializers.URLField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. not_found or validation_error.")
    detail = serializers.CharField()
    errors = ProblemErrorOut(many=True, required=False)


_PROBLEM_TEXT = {
    400: "The request could not be read: a malformed body, Content-Length or Idempotency-Key.",
    401: "No API key, or not a valid one.",
    403: "The key lacks the scope this endpoint needs.",
    404: "No such object in this project.",
    409: "Conflicts with the current state.",
    413: "The body is over the size limit.",
    415: "Unsupported media type.",
    422: "Invalid input; errors name each field.",
    429: "Over the key's request budget; Retry-After says when to try again.",
}


def problem_responses(*statuses: int, always: bool = True) -> dict[Any, Any]:
    """``extend_schema`` responses for the problems an endpoint can answer.

    Every endpoint needs a key with a scope, so 401 and 403 are listed unless ``always``
    is false."""
    listed = (401, 403, *statuses) if always else statuses
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(ProblemOut, description=_PROBLEM_TEXT.get(status, "Error"))
        for status in dict.fromkeys(listed)
    }
