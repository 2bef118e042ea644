"""Input shapes for the delivery API (dead letters)."""

from __future__ import annotations

from rest_framework import serializers

from apps.core import strict_fields as strict
from apps.core.query import QueryParameters
from apps.subscribers.models import Channel

FILTERS = ("channel", "origin_kind", "error_contains", "failed_after", "failed_before")


class DeadLetterFilterInput(serializers.Serializer):
    channel = serializers.ChoiceField(choices=Channel.choices, required=False)
    origin_kind = strict.CharField(max_length=32, required=False)
    error_contains = strict.CharField(max_length=200, required=False)
    failed_after = serializers.DateTimeField(required=False)
    failed_before = serializers.DateTimeField(required=False)


class DeadLetterListInput(QueryParameters, DeadLetterFilterInput):
    before = serializers.IntegerField(required=False, min_value=1, help_text="Cursor: ids below this one.")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500, default=100)


class DeadLetterReplayInput(DeadLetterFilterInput):
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False, max_length=1000)
    limit = serializers.IntegerField(min_value=1, max_value=10_000, default=1000)

    def validate(self, attrs: dict) -> dict:
        filters = FILTERS
        if attrs.get("ids") and any(name in attrs for name in filters):
            raise serializers.ValidationError("Replay either by ids or by filter, not both.")
        if not attrs.get("ids") and not any(name in attrs for name in filters):
            raise serializers.ValidationError(
                "Name the dead letters to replay: ids, or at least one filter.", code="filter_required"
            )
        return attrs
