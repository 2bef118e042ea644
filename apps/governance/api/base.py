"""Base for every public API view: the project comes from the key, never the request."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.json_body import ApiJSONParser, JsonBodyRefused, json_body_load
from apps.core.problems import problem_exception_handler
from apps.governance.authentication import ApiKeyAuthentication, ApiPrincipal, KeyRejected, resolve_api_key
from apps.governance.models import ApiKey
from apps.governance.permissions import HasScope, required_scope
from apps.governance.services import api_key_mark_used
from apps.governance.throttling import ApiKeyRateThrottle
from apps.projects.models import Project


class ProjectAPIView(APIView):
    # Subclasses set ``required_scope`` (or ``required_scopes`` per method). A note, not a
    # docstring: drf-spectacular would publish an inherited docstring as every operation's
    # description.
    # The one place the API checks a key, its scope, then its request budget.
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasScope]
    throttle_classes = [ApiKeyRateThrottle]
    parser_classes = [ApiJSONParser]
    required_scope: str | None = None
    required_scopes: dict[str, str] | None = None

    @classmethod
    def key_may_call(cls, key: ApiKey, method: str) -> bool:
        """Whether ``key`` passes this view's access checks for ``method`` (scope, and
        whatever a subclass adds), decided before any view code runs."""
        scope = required_scope(cls, method)
        return scope is not None and (scope == "*" or scope in key.effective_scopes())

    @property
    def api_key(self) -> ApiKey:
        return self.request.auth  # type: ignore[return-value]

    @property
    def project(self) -> Project:
        return self.api_key.project

    # --- the plain path ---------------------------------------------------------------
    # DRF's request wrapping, content negotiation and rendering cost a small JSON request
    # more CPU than the work it asks for. A hot endpoint may answer the everyday request
    # itself: a JSON body, JSON answer, a good key with the scope and budget. These
    # helpers give it exactly what DRF would have decided; whenever they return None the
    # endpoint hands the request to DRF, which answers (and words any refusal) as always.

    def plain_json_body(self, request: HttpRequest) -> Any | None:
        """The parsed body of a request DRF would parse and answer as plain JSON, else None."""
        meta = request.META
        if (
            meta.get("CONTENT_TYPE") != "application/json"
            or meta.get("HTTP_ACCEPT", "*/*") not in ("*/*", "application/json")
            or meta.get("QUERY_STRING")
            # DRF's test client forcing a user or token (it sets both, None when not forcing).
            or getattr(request, "_force_auth_user", None) is not None
            or getattr(request, "_force_auth_token", None) is not None
            or self.authentication_classes != ProjectAPIView.authentication_classes
            or self.permission_classes != ProjectAPIView.permission_classes
            or self.throttle_classes != ProjectAPIView.throttle_classes
            or self.parser_classes != ProjectAPIView.parser_classes
        ):
            return None
        try:
            # As ApiJSONParser: UTF-8, strict (no NaN or Infinity), depth and characters checked.
            return json_body_load(request.body.decode("utf-8"))
        except (ValueError, JsonBodyRefused, RequestDataTooBig):  # DRF reads the stream itself, with no such limit
            return None

    def plain_key(self, request: HttpRequest) -> ApiKey | None:
        """The request's key if it authenticates and holds the scope; None: DRF must answer."""
        try:
            key = resolve_api_key(request)
        except KeyRejected:
            return None
        if key is None or not self.key_may_call(key, request.method or "GET"):
            return None
        return key

    def plain_admit(self, request: HttpRequest, key: ApiKey) -> bool:
        """Count the request against the key's budget, as DRF's check would (call it last,
        once the request is known to be answered here). False: over budget, and DRF must
        answer; a refused request counted twice changes nothing, the window is spent."""
        if not ApiKeyRateThrottle().key_allows(key):
            return False
        api_key_mark_used(api_key=key)
        request.user = ApiPrincipal(api_key=key)  # as DRF leaves it on the Django request
        return True

    def plain_response(self, data: Any, status: int, headers: dict[str, str] | None = None) -> HttpResponse:
        """``Response(data, status, headers)`` as DRF would render and finalize it."""
        response = HttpResponse(_RENDERER.render(data), status=status, content_type="application/json")
        for name, value in (headers or {}).items():
            response[name] = value
        response["Allow"] = ", ".join(self.allowed_methods)
        return response

    def plain_error(self, request: HttpRequest, exc: Exception) -> HttpResponse:
        """What DRF answers for ``exc`` raised by the handler (re-raised if it has no answer)."""
        answer: Response | None = problem_exception_handler(
            exc, {"view": self, "args": (), "kwargs": {}, "request": None}
        )
        if answer is None:
            raise exc
        response = HttpResponse(
            _RENDERER.render(answer.data), status=answer.status_code, content_type=answer.content_type
        )
        for name, value in answer.items():
            if name.lower() != "content-type":
                response[name] = value
        response["Allow"] = ", ".join(self.allowed_methods)
        return response


_RENDERER = JSONRenderer()


def replay_namespace(key: ApiKey) -> str:
    """Keys with the same powers share replays (a rotated key replays its predecessor's
    answers); a key with other powers never sees them."""
    if key.kind != ApiKey.Kind.RESTRICTED:
        return key.kind
    powers = f"{key.ceiling}:{','.join(sorted(key.effective_scopes()))}"
    return "restricted:" + hashlib.sha256(powers.encode()).hexdigest()[:32]


def idempotency_owner(request: HttpRequest, view: Callable[..., HttpResponse]) -> tuple[int, str] | None:
    """``TIDINGS_IDEMPOTENCY_OWNER_RESOLVER``: the project and replay namespace of a
    request its view would let through; None when the view must answer (and refuse) it."""
    try:
        key = resolve_api_key(request)
    except KeyRejected:
        return None
    view_class = getattr(view, "view_class", None)
    if key is None or not (isinstance(view_class, type) and issubclass(view_class, ProjectAPIView)):
        return None
    if not view_class.key_may_call(key, request.method or "POST"):
        return None
    return key.project_id, replay_namespace(key)
