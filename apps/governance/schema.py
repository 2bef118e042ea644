"""OpenAPI wiring: the API key scheme, and only /api/v1/ in the published contract."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apps.governance.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        # One wording, in SPECTACULAR_SETTINGS (which also lists the scheme for every path).
        return dict(settings.SPECTACULAR_SETTINGS["APPEND_COMPONENTS"]["securitySchemes"]["ApiKey"])


def only_public_api(endpoints: list[tuple[str, str, str, Any]], **_: Any) -> list[tuple[str, str, str, Any]]:
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/api/v1/")]
