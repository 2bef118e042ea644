"""RFC 9457 problem documents: every API error leaves through here."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from django.core.exceptions import BadRequest, ObjectDoesNotExist, RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.signals import got_request_exception
from django.http import Http404, HttpRequest, HttpResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions as drf
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from apps.core.errors import ApplicationError

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://tidings.dev/problems/"
API_PREFIX = "/api/"

logger = logging.getLogger("django.request")

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
    if isinstance(body.get("errors"), list):
        # Every entry names its field, null when it concerns no one field (a graph issue
        # names its node or edge instead): clients read one shape.
        body["errors"] = [{"field": None, **e} if isinstance(e, dict) else e for e in body["errors"]]
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
    if isinstance(exc, (Http404, ObjectDoesNotExist)):
        # ObjectDoesNotExist: a row the view had read was deleted before it was written
        # (a PATCH racing a DELETE); for the caller it is gone.
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


@csrf_exempt
def api_not_found(request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
    """Unknown paths under /api/ answer a problem, not an HTML page or a redirect.

    Exempt from CSRF like every API view: a POST to an unknown path is a 404 problem, not
    the CSRF failure page (which the API process, having no CSRF middleware, never sends).
    """
    return problem_response(404, "not_found", f"No API endpoint at {request.path}.")


def _internal_error() -> HttpResponse:
    # Nothing about the exception reaches the client: the log has the traceback.
    return problem_response(500, "internal_error", "An unexpected error occurred; it has been logged.")


class ApiProblemMiddleware:
    """An unexpected exception in an API view answers a 500 problem, never a page.

    Django would render its debug page under DEBUG (and an HTML error page otherwise);
    API clients parse problem+json whatever the settings. The exception is still logged
    and announced the way Django does it, so tests and error reporting see it as before.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith(API_PREFIX):
            return None
        # What Django itself answers with a 4xx stays a 4xx, as a problem.
        if isinstance(exception, Http404):
            return problem_response(404, "not_found", "No such object in this project.")
        if isinstance(exception, DjangoPermissionDenied):
            return problem_response(403, "forbidden", str(exception) or "You may not do this.")
        if isinstance(exception, RequestDataTooBig):
            return problem_response(413, "payload_too_large", "The request body is larger than this endpoint accepts.")
        if isinstance(exception, (BadRequest, SuspiciousOperation)):
            return problem_response(400, "bad_request", "The request could not be understood.")
        logger.error(
            "Internal Server Error: %s",
            request.path,
            exc_info=(type(exception), exception, exception.__traceback__),
            extra={"status_code": 500, "request": request},
        )
        got_request_exception.send(sender=None, request=request)
        return _internal_error()


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """handler500: errors outside a view (middleware) still answer problem+json under /api/."""
    if request.path.startswith(API_PREFIX):
        return _internal_error()
    return defaults.server_error(request, *args, **kwargs)
