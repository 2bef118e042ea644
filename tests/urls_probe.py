"""Probe endpoints that exercise the API plumbing (auth, scopes, idempotency, tenancy)
on top of the real URLconf. Tests opt in with ``@pytest.mark.urls("tests.urls_probe")``."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import include, path
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.core.errors import ApplicationError
from apps.core.models import IdempotencyRecord
from apps.governance.api.base import ProjectAPIView
from apps.governance.models import ApiKey

CALLS: list[dict] = []


class PublishProbe(ProjectAPIView):
    required_scope = "notifications:publish"

    def get(self, request: Request) -> Response:
        return Response({"ran": True})


class WriteProbe(ProjectAPIView):
    """Counts each real execution, so a replay is visible as 'not executed again'."""

    required_scope = "subscribers:write"

    class Input(serializers.Serializer):
        name = serializers.CharField(max_length=20)
        fail = serializers.BooleanField(default=False)

    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data["fail"]:
            raise ApplicationError("Asked to fail.", code="asked_to_fail")
        CALLS.append({"project": self.project.pk, "name": data.validated_data["name"]})
        return Response({"call": len(CALLS), "name": data.validated_data["name"]}, status=201)


class KeyDetailProbe(ProjectAPIView):
    """Reads a tenant-owned row by id: another project's id must be a 404."""

    required_scope = "read"

    def get(self, request: Request, key_id: int) -> Response:
        key = get_object_or_404(ApiKey.objects.for_project(self.project), pk=key_id)
        return Response({"id": key.pk, "name": key.name})


class CrashProbe(ProjectAPIView):
    """A bug in a view: an exception no handler knows."""

    required_scope = "read"

    def get(self, request: Request) -> Response:
        raise RuntimeError("secret internals: password=hunter2")


def plain_missing_probe(request: HttpRequest) -> HttpResponse:
    """A plain Django view under /api/ that finds nothing."""
    raise Http404("nothing here")


class UndeclaredProbe(ProjectAPIView):
    def get(self, request: Request) -> Response:  # pragma: no cover - must not run
        raise AssertionError("ran without a declared scope")


urlpatterns = [
    path("api/v1/probe/publish", PublishProbe.as_view()),
    path("api/v1/probe/write", WriteProbe.as_view()),
    path("api/v1/probe/keys/<int:key_id>", KeyDetailProbe.as_view()),
    path("api/v1/probe/undeclared", UndeclaredProbe.as_view()),
    path("api/v1/probe/crash", CrashProbe.as_view()),
    path("api/v1/probe/plain-missing", plain_missing_probe),
    path("", include("config.urls")),
]

__all__ = ["CALLS", "IdempotencyRecord", "urlpatterns"]
