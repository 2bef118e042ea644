from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from apps.governance.api.base import ProjectAPIView
from apps.governance.api.docs import described


class MeView(ProjectAPIView):
    """Who is calling: the key's project, type and scopes."""

    required_scope = "*"

    @extend_schema(
        operation_id="me",
        summary="Who is calling",
        description=described(
            (
                "The key's project (with its timezone), the key itself (masked), its type and "
                "effective scopes. Useful to check a key before using it."
            ),
            "*",
        ),
        responses=inline_serializer(
            "Me",
            {
                "project": inline_serializer(
                    "MeProject",
                    {
                        "id": serializers.IntegerField(),
                        "slug": serializers.CharField(),
                        "name": serializers.CharField(),
                        "organization": serializers.CharField(),
                        "timezone": serializers.CharField(),
                    },
                ),
                "key": inline_serializer(
                    "MeKey",
                    {
                        "id": serializers.IntegerField(),
                        "name": serializers.CharField(),
                        "type": serializers.CharField(),
                        "ceiling": serializers.CharField(),
                        "masked": serializers.CharField(),
                    },
                ),
                "type": serializers.CharField(),
                "scopes": serializers.ListField(child=serializers.CharField()),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        key = self.api_key
        project = key.project
        return Response(
            {
                "project": {
                    "id": project.pk,
                    "slug": project.slug,
                    "name": project.name,
                    "organization": project.organization.slug,
                    "timezone": project.timezone,
                },
                "key": {"id": key.pk, "name": key.name, "type": key.kind, "ceiling": key.ceiling, "masked": key.masked},
                "type": key.kind,
                "scopes": sorted(key.effective_scopes()),
            }
        )
