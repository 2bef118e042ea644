"""Input shapes only; the rules live in services and graph validation."""

from __future__ import annotations

from rest_framework import serializers

from apps.core import strict_fields as strict
from apps.core.query import QueryParameters
from apps.workflows.api.graph_schema import WorkflowDraftGraphField


class WorkflowInput(serializers.Serializer):
    key = strict.SlugField(max_length=64)
    name = strict.CharField(max_length=200, required=False)
    graph = WorkflowDraftGraphField(required=False)
    allow_reentry = strict.BooleanField(required=False)


class ExecutionInput(serializers.Serializer):
    external_ids = serializers.ListField(child=strict.CharField(max_length=255), required=False, max_length=10_000)
    segment = serializers.IntegerField(required=False, min_value=1)
    tag = strict.CharField(required=False, max_length=64)
    everyone = strict.BooleanField(required=False)
    version = serializers.IntegerField(required=False, min_value=1)

    def validate(self, attrs: dict) -> dict:
        given = [k for k in ("external_ids", "segment", "tag", "everyone") if attrs.get(k) not in (None, False, [])]
        if len(given) != 1:
            raise serializers.ValidationError(
                "Give exactly one audience: external_ids, segment, tag or everyone.", code="invalid_audience"
            )
        return attrs


class WaitPreviewInput(QueryParameters):
    node = strict.CharField(max_length=64)
    subscriber = strict.CharField(max_length=255, required=False)
    at = serializers.DateTimeField(required=False)
    timezone = strict.CharField(max_length=64, required=False)
