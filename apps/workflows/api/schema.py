"""Response shapes of the workflows API, for the OpenAPI document only.

The views build their JSON in ``workflow_data`` and ``version_data``; these describe it."""

from __future__ import annotations

from rest_framework import serializers

from apps.workflows.api.graph_schema import WorkflowDraftGraphField, WorkflowGraphField


class GraphIssueOut(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine code, e.g. dangling_handle or invalid_config.")
    message = serializers.CharField()
    node = serializers.CharField(required=False, help_text="The node the problem is about, when there is one.")
    edge = serializers.IntegerField(required=False, help_text="The index of the edge, when it is about one.")


class WorkflowOut(serializers.Serializer):
    key = serializers.SlugField()
    name = serializers.CharField()
    allow_reentry = serializers.BooleanField()
    draft_graph = WorkflowDraftGraphField()
    latest_version = serializers.IntegerField(allow_null=True, help_text="Null until the first publish.")
    updated_at = serializers.DateTimeField()


class WorkflowDetailOut(WorkflowOut):
    draft_issues = GraphIssueOut(many=True, help_text="Every problem publishing the draft would meet.")


class WorkflowListOut(serializers.Serializer):
    results = WorkflowOut(many=True)


class WorkflowVersionOut(serializers.Serializer):
    workflow = serializers.SlugField()
    number = serializers.IntegerField()
    graph = WorkflowGraphField()
    published_at = serializers.DateTimeField()
    published_by = serializers.CharField(allow_null=True, help_text="The console user who published it, if any.")
    published_via = serializers.CharField()
