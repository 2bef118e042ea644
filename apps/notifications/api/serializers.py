"""Input shapes for the publish API. Meaning (templates, destinations) is the services' job."""

from __future__ import annotations

from rest_framework import serializers

from apps.notifications.models import Priority
from apps.subscribers.models import Channel

MAX_RECIPIENTS = 100
MAX_BATCH = 500


class ChannelsField(serializers.ListField):
    child = serializers.ChoiceField(choices=Channel.choices)

    def to_internal_value(self, data: object) -> list[str]:
        channels = super().to_internal_value(data)
        if len(set(channels)) != len(channels):
            raise serializers.ValidationError("A channel is listed twice.", code="duplicate")
        return channels


class NotificationPublishInput(serializers.Serializer):
    template = serializers.CharField(max_length=120, help_text='"key" (latest published) or "key@version".')
    to = serializers.ListField(
        child=serializers.JSONField(),
        min_length=1,
        max_length=MAX_RECIPIENTS,
        help_text=(
            'External ids, or raw destinations: {"email": ...}, {"phone": ...}, {"push_token": ...}, {"url": ...}.'
        ),
    )
    channels = ChannelsField(min_length=1)
    priority = serializers.ChoiceField(choices=Priority.choices, default=Priority.NORMAL)
    data = serializers.DictField(default=dict)
    send_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class BroadcastInput(serializers.Serializer):
    template = serializers.CharField(max_length=120)
    channels = ChannelsField(min_length=1)
    segment = serializers.IntegerField(required=False, min_value=1)
    tag = serializers.CharField(required=False, max_length=64)
    subscribers = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, min_length=1, max_length=10_000
    )
    data = serializers.DictField(default=dict)
    send_at = serializers.DateTimeField(required=False, allow_null=True, default=None)

    def validate(self, attrs: dict) -> dict:
        given = [name for name in ("segment", "tag", "subscribers") if attrs.get(name) not in (None, "", [])]
        if len(given) != 1:
            raise serializers.ValidationError(
                "Name exactly one audience: segment, tag or subscribers.", code="audience_required"
            )
        return attrs


class EmailMessageInput(serializers.Serializer):
    to = serializers.JSONField(help_text='An external id, or {"email": "a@example.com"}.')
    template = serializers.CharField(max_length=120, required=False)
    data = serializers.DictField(default=dict)
    subject = serializers.CharField(max_length=998, required=False)
    text = serializers.CharField(required=False, allow_blank=True)
    html = serializers.CharField(required=False, allow_blank=True)
    key = serializers.CharField(max_length=200, required=False, help_text="Your idempotency key for this message.")
    category = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict) -> dict:
        if "template" in attrs:
            if any(attrs.get(name) for name in ("subject", "text", "html")):
                raise serializers.ValidationError("Send either a template or subject/text/html, not both.")
        elif not attrs.get("subject") or not (attrs.get("text") or attrs.get("html")):
            raise serializers.ValidationError("Without a template, subject and text or html are required.")
        return attrs


class PushMessageInput(serializers.Serializer):
    to = serializers.JSONField(help_text='An external id (all active devices), or {"push_token": "..."}.')
    template = serializers.CharField(max_length=120, required=False)
    data = serializers.DictField(default=dict)
    title = serializers.CharField(max_length=200, required=False)
    body = serializers.CharField(max_length=4000, required=False)
    image = serializers.URLField(required=False)
    payload = serializers.DictField(required=False, default=dict, help_text="Push data dictionary.")
    key = serializers.CharField(max_length=200, required=False)
    category = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict) -> dict:
        if "template" in attrs:
            if attrs.get("title") or attrs.get("body"):
                raise serializers.ValidationError("Send either a template or title/body, not both.")
        elif not attrs.get("title") and not attrs.get("body"):
            raise serializers.ValidationError("Without a template, a title or a body is required.")
        return attrs


class EmailBatchInput(serializers.Serializer):
    messages = EmailMessageInput(many=True, min_length=1, max_length=MAX_BATCH)
    priority = serializers.ChoiceField(choices=Priority.choices, default=Priority.NORMAL)


class PushBatchInput(serializers.Serializer):
    messages = PushMessageInput(many=True, min_length=1, max_length=MAX_BATCH)
    priority = serializers.ChoiceField(choices=Priority.choices, default=Priority.NORMAL)
