"""Base for every public API view: the project comes from the key, never the request."""

from __future__ import annotations

from rest_framework.views import APIView

from apps.governance.authentication import ApiKeyAuthentication
from apps.governance.models import ApiKey
from apps.governance.permissions import HasScope
from apps.governance.throttling import ApiKeyRateThrottle
from apps.projects.models import Project


class ProjectAPIView(APIView):
    """Subclasses set ``required_scope`` (or ``required_scopes`` per method)."""

    # The one place the API checks a key, its scope, then its request budget.
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasScope]
    throttle_classes = [ApiKeyRateThrottle]
    required_scope: str | None = None
    required_scopes: dict[str, str] | None = None

    @property
    def api_key(self) -> ApiKey:
        return self.request.auth  # type: ignore[return-value]

    @property
    def project(self) -> Project:
        return self.api_key.project
