"""Request limits, enforced at the door before a body is read or a view runs.

Under ASGI, Django buffers the whole body before any middleware runs, so the ASGI
wrapper refuses an oversized ``Content-Length`` at the door; the Django middleware
does the same for WSGI and the test client. The middleware also refuses a NUL character
in an API path or query string: no stored value can hold one (PostgreSQL text cannot),
so no lookup could match it, and the database driver would raise instead of answering.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from apps.core.problems import PROBLEM_CONTENT_TYPE, problem_body, problem_response


def body_limit_for_path(path: str) -> int | None:
    """Bytes allowed for a request to ``path``; ``None`` means Django's own defaults."""
    if not path.startswith("/api/"):
        return None
    if any(path.startswith(prefix) for prefix in settings.TIDINGS_UPLOAD_PATHS):
        return int(settings.TIDINGS_UPLOAD_MAX_BODY_BYTES)
    return int(settings.TIDINGS_API_MAX_BODY_BYTES)


def _too_large(limit: int, declared: int) -> tuple[int, str, str]:
    return (
        413,
        "payload_too_large",
        f"The request body is {declared} bytes; this endpoint accepts at most {limit} bytes.",
    )


class BodySizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_limit_for_path(request.path)
        if limit is not None:
            try:
                declared = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                return problem_response(400, "bad_content_length", "Content-Length is not a number.")
            if declared > limit:
                status, code, detail = _too_large(limit, declared)
                return problem_response(status, code, detail, limit=limit)
            query = request.META.get("QUERY_STRING", "")
            if "\x00" in request.path:
                return problem_response(404, "not_found", "No API endpoint or object has a NUL character in its path.")
            if "%00" in query or "\x00" in query:
                return _nul_in_query(query)
        return self.get_response(request)


def _nul_in_query(query: str) -> HttpResponse:
    name = next((n for n, v in parse_qsl(query, keep_blank_values=True) if "\x00" in n + v), "")
    detail = "A query parameter holds a NUL character (%00), which no stored value can match."
    error = {"field": name or None, "message": detail, "code": "invalid_character"}
    return problem_response(422, "invalid_character", detail, errors=[error])


ASGIApp = Callable[[dict[str, Any], Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


class BodySizeLimitASGI:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            limit = body_limit_for_path(scope.get("path", ""))
            if limit is not None:
                declared = 0
                for name, value in scope.get("headers", []):
                    if name == b"content-length":
                        try:
                            declared = int(value)
                        except ValueError:
                            declared = 0
                if declared > limit:
                    status, code, detail = _too_large(limit, declared)
                    payload = json.dumps(problem_body(status, code, detail, limit=limit)).encode()
                    await send(
                        {
                            "type": "http.response.start",
                            "status": status,
                            "headers": [
                                (b"content-type", PROBLEM_CONTENT_TYPE.encode()),
                                (b"content-length", str(len(payload)).encode()),
                                (b"connection", b"close"),
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": payload})
                    return
        await self.app(scope, receive, send)
