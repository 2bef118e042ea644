"""Response shapes of the publish API, for the OpenAPI document only."""

from __future__ import annotations

from rest_framework import serializers

from apps.delivery.api.schema import DeliveryOut


class PublishAcceptedOut(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.CharField()


class NotificationOut(serializers.Serializer):
    id = serializers.IntegerField()
    template = serializers.CharField(help_text="key@version, as resolved when accepted.")
    channels = serializers.ListField(child=serializers.CharField())
    to = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))
    priority = serializers.CharField()
    data = serializers.DictField()
    send_at = serializers.DateTimeField(allow_null=True)
    state = serializers.CharField()
    routing = serializers.DictField(help_text="Deliveries made, and every recipient skipped with why.")
    created_at = serializers.DateTimeField()
    routed_at = serializers.DateTimeField(allow_null=True)
    deliveries = DeliveryOut(many=True)


class BatchMessageOut(serializers.Serializer):
    index = serializers.IntegerField()
    deliveries = serializers.ListField(child=serializers.IntegerField())


class BatchAcceptedOut(serializers.Serializer):
    batch = serializers.CharField()
    messages = BatchMessageOut(many=True)


class BroadcastAcceptedOut(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.CharField()
    audience = serializers.CharField()


class BroadcastAudienceOut(serializers.Serializer):
    kind = serializers.CharField()
    ref = serializers.CharField()


class BroadcastOut(serializers.Serializer):
    id = serializers.IntegerField()
    template = serializers.CharField()
    channels = serializers.ListField(child=serializers.CharField())
    audience = BroadcastAudienceOut()
    state = serializers.CharField()
    enqueued = serializers.DictField(child=serializers.IntegerField())
    send_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
