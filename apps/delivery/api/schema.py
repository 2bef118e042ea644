"""Response shapes of the publish and delivery APIs, for the OpenAPI document only."""

from __future__ import annotations

from rest_framework import serializers

from apps.core.api_schema import problem_responses


class AttemptOut(serializers.Serializer):
    number = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    outcome = serializers.CharField()
    provider_code = serializers.CharField()
    provider_message = serializers.CharField()
    latency_ms = serializers.IntegerField(allow_null=True)


class EventOut(serializers.Serializer):
    state = serializers.CharField()
    reason = serializers.CharField()
    at = serializers.DateTimeField()


class OriginOut(serializers.Serializer):
    kind = serializers.CharField()
    id = serializers.CharField()


class DeliveryOut(serializers.Serializer):
    id = serializers.IntegerField()
    channel = serializers.CharField()
    destination = serializers.CharField()
    subscriber_id = serializers.IntegerField(allow_null=True)
    origin = OriginOut()
    template_version_id = serializers.IntegerField(allow_null=True)
    lane = serializers.CharField()
    state = serializers.CharField()
    state_reason = serializers.CharField()
    category = serializers.CharField()
    due_at = serializers.DateTimeField()
    attempts = serializers.IntegerField()
    attempt_budget = serializers.IntegerField()
    provider_reference = serializers.CharField()
    last_error = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    sent_at = serializers.DateTimeField(allow_null=True)
    attempt_log = AttemptOut(many=True, required=False)
    events = EventOut(many=True, required=False)


class DeadLetterOut(DeliveryOut):
    payload_snapshot = serializers.JSONField(allow_null=True)


class DeadLetterPageOut(serializers.Serializer):
    results = DeadLetterOut(many=True)
    next_before = serializers.IntegerField(allow_null=True)


class ReplayOut(serializers.Serializer):
    replayed = serializers.ListField(child=serializers.IntegerField())
    count = serializers.IntegerField()


class SubscriberRefOut(serializers.Serializer):
    external_id = serializers.CharField(allow_null=True)
    id = serializers.IntegerField()


class SubscriberMessagesOut(serializers.Serializer):
    subscriber = SubscriberRefOut()
    results = DeliveryOut(many=True)
    next_before = serializers.IntegerField(allow_null=True)


problems = problem_responses
