"""RFC 9457 problem documents: every API error leaves through here."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpResponse
from rest_framework import exceptions as drf
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from apps.core.errors import ApplicationError

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://tidings.dev/problems/"

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
}


class ProblemJSONRenderer(JSONRenderer):
    media_type = PROBLEM_CONTENT_TYPE
    format = "problem+json"


def problem_body(status: int, code: str, detail: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + code,
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "code": code,
        "detail": detail,
    }
    body.update({k: v for k, v in extra.items() if v is not None})
    return body


def problem_response(
    status: int, code: str, detail: str, headers: dict[str, str] | None = None, **extra: Any
) -> HttpResponse:
    """A plain Django response, for middleware that answers before DRF runs."""
    response = HttpResponse(
        json.dumps(problem_body(status, code, detail, **extra)),
        status=status,
        content_type=PROBLEM_CONTENT_TYPE,
    )
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _flatten_errors(detail: Any, codes: Any, prefix: str = "") -> list[dict[str, str]]:
    errors: list[dict[str, str]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if name.endswith("non_field_errors"):
                name = prefix
            errors += _flatten_errors(value, codes.get(key) if isinstance(codes, dict) else codes, name)
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            sub_codes = codes[index] if isinstance(codes, list) and index < len(codes) else codes
            if isinstance(value, (dict, list)):
                errors += _flatten_errors(value, sub_codes, f"{prefix}[{index}]" if prefix else f"[{index}]")
            else:
                errors.append({"field": prefix or None, "message": str(value), "code": str(sub_codes or "invalid")})
    else:
        errors.append({"field": prefix or None, "message": str(detail), "code": str(codes or "invalid")})
    return errors


def _problem(status: int, code: str, detail: str, headers: dict[str, str] | None = None, **extra: Any) -> Response:
    response = Response(problem_body(status, code, detail, **extra), status=status, headers=headers)
    response.content_type = PROBLEM_CONTENT_TYPE
    return response


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: every error becomes ``application/problem+json``."""
    if isinstance(exc, ApplicationError):
        extra = dict(exc.extra)
        if exc.field:
            extra.setdefault("errors", [{"field": exc.field, "message": exc.message, "code": exc.code}])
        return _problem(exc.status, exc.code, exc.message, **extra)
    if isinstance(exc, Http404):
        return _problem(404, "not_found", "No such object in this project.")
    if isinstance(exc, RequestDataTooBig):
        return _problem(413, "payload_too_large", "The request body is larger than this endpoint accepts.")
    if isinstance(exc, DjangoPermissionDenied):
        return _problem(403, "forbidden", str(exc) or "You may not do this.")
    if isinstance(exc, drf.ValidationError):
        errors = _flatten_errors(exc.detail, exc.get_codes())
        first = errors[0] if errors else {"field": None, "message": "Invalid input."}
        where = f"{first['field']}: " if first.get("field") else ""
        return _problem(422, "validation_error", f"{where}{first['message']}", errors=errors)
    if isinstance(exc, drf.Throttled):
        wait = max(1, int(exc.wait or 1))
        return _problem(
            429,
            "rate_limited",
            f"Too many requests for this API key; retry in {wait} s.",
            headers={"Retry-After": str(wait)},
            retry_after=wait,
        )
    if isinstance(exc, drf.UnsupportedMediaType):
        return _problem(415, "unsupported_media_type", f"{exc.detail} Send application/json.")
    if isinstance(exc, drf.ParseError):
        return _problem(400, "malformed_body", f"The request body could not be parsed: {exc.detail}")
    if isinstance(exc, drf.APIException):
        code = getattr(exc, "problem_code", None) or (
            exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
        )
        headers = {}
        if isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
            headers["WWW-Authenticate"] = 'Bearer realm="api"'
        extra = getattr(exc, "problem_extra", {}) or {}
        return _problem(exc.status_code, str(code), str(exc.detail), headers=headers, **extra)
    return None


def api_not_found(request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
    """Unknown paths under /api/ answer a problem, not an HTML page or a redirect."""
    return problem_response(404, "not_found", f"No API endpoint at {request.path}.")
