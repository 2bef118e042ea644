"""Input shapes only; the rules live in services and graph validation."""

from __future__ import annotations

from rest_framework import serializers

from apps.workflows.api.graph_schema import WorkflowGraphField


class WorkflowInput(serializers.Serializer):
    key = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200, required=False)
    graph = WorkflowGraphField(required=False)
    allow_reentry = serializers.BooleanField(required=False)


class ExecutionInput(serializers.Serializer):
    external_ids = serializers.ListField(child=serializers.CharField(max_length=255), required=False, max_length=10_000)
    segment = serializers.IntegerField(required=False, min_value=1)
    tag = serializers.CharField(required=False, max_length=64)
    everyone = serializers.BooleanField(required=False)
    version = serializers.IntegerField(required=False, min_value=1)

    def validate(self, attrs: dict) -> dict:
        given = [k for k in ("external_ids", "segment", "tag", "everyone") if attrs.get(k) not in (None, False, [])]
        if len(given) != 1:
            raise serializers.ValidationError(
                "Give exactly one audience: external_ids, segment, tag or everyone.", code="invalid_audience"
            )
        return attrs


class WaitPreviewInput(serializers.Serializer):
    node = serializers.CharField(max_length=64)
    subscriber = serializers.CharField(max_length=255, required=False)
    at = serializers.DateTimeField(required=False)
    timezone = serializers.CharField(max_length=64, required=False)
