"""Base for every public API view: the project comes from the key, never the request."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.views import APIView

from apps.governance.models import ApiKey
from apps.projects.models import Project


class ProjectAPIView(APIView):
    """Subclasses set ``required_scope`` (or ``required_scopes`` per method)."""

    required_scope: str | None = None
    required_scopes: dict[str, str] | None = None

    @property
    def api_key(self) -> ApiKey:
        return self.request.auth  # type: ignore[return-value]

    @property
    def project(self) -> Project:
        return self.api_key.project

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
