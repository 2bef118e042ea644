"""Input shapes for the publish API. Meaning (templates, destinations) is the services' job."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core import strict_fields as strict
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


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "minLength": 1, "maxLength": 255},
            {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": {"type": "string", "minLength": 1},
            },
        ]
    }
)
class RecipientField(serializers.JSONField):
    """An external id, or one ``{kind: destination}``; the publish services check which
    kinds the channels reach."""


class NotificationPublishInput(serializers.Serializer):
    template = strict.CharField(max_length=120, help_text='"key" (latest published) or "key@version".')
    to = serializers.ListField(
        child=RecipientField(),
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


_CHANNELS = frozenset(Channel.values)
_PRIORITIES = frozenset(Priority.values)
_PUBLISH_FIELDS = frozenset(NotificationPublishInput._declared_fields)


def _plain_text(value: object, max_length: int) -> bool:
    # What CharField would return unchanged: no surrounding space to trim, no NUL or
    # surrogate to refuse, not blank, not too long.
    return (
        type(value) is str
        and 0 < len(value) <= max_length
        and value.isascii()
        and value.isprintable()
        and value == value.strip()
    )


def _plain_recipient(item: object) -> bool:
    if type(item) is str:
        return True
    return type(item) is dict and all(type(k) is str and type(v) is str for k, v in item.items())


def publish_input_plain(data: object) -> dict | None:
    """``NotificationPublishInput``'s validated data for the everyday valid request, else ``None``.

    Building the serializer's bound fields (a deep copy per request) costs more CPU than
    the rest of the publish request's validation. A body made only of plain values that the
    serializer is known to accept unchanged is taken as it is; anything else (every refusal
    included) returns ``None`` and goes through the serializer, which words the errors.
    tests/notifications/test_publish_input.py holds the two to the same answers.
    """
    if type(data) is not dict or not _PUBLISH_FIELDS.issuperset(data):
        return None
    template, to, channels = data.get("template"), data.get("to"), data.get("channels")
    priority = data.get("priority", Priority.NORMAL)
    payload = data.get("data", {})
    if not (
        _plain_text(template, 120)
        and type(to) is list
        and 1 <= len(to) <= MAX_RECIPIENTS
        and all(_plain_recipient(item) for item in to)
        and type(channels) is list
        and channels
        and all(type(channel) is str and channel in _CHANNELS for channel in channels)
        and len(set(channels)) == len(channels)
        and isinstance(priority, str)
        and priority in _PRIORITIES
        and type(payload) is dict
        and data.get("send_at") is None
    ):
        return None
    return {
        "template": template,
        "to": list(to),
        "channels": list(channels),
        "priority": priority,
        "data": dict(payload),
        "send_at": None,
    }


class BroadcastInput(serializers.Serializer):
    template = strict.CharField(max_length=120)
    channels = ChannelsField(min_length=1)
    segment = serializers.IntegerField(required=False, min_value=1)
    tag = strict.CharField(required=False, max_length=64)
    subscribers = serializers.ListField(
        child=strict.CharField(max_length=255), required=False, min_length=1, max_length=10_000
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
    to = RecipientField(help_text='An external id, or {"email": "a@example.com"}.')
    template = strict.CharField(max_length=120, required=False)
    data = serializers.DictField(default=dict)
    subject = strict.CharField(max_length=998, required=False)
    text = strict.CharField(required=False, allow_blank=True)
    html = strict.CharField(required=False, allow_blank=True)
    key = strict.CharField(max_length=200, required=False, help_text="Your idempotency key for this message.")
    category = strict.CharField(max_length=64, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict) -> dict:
        if "template" in attrs:
            if any(attrs.get(name) for name in ("subject", "text", "html")):
                raise serializers.ValidationError("Send either a template or subject/text/html, not both.")
        elif not attrs.get("subject") or not (attrs.get("text") or attrs.get("html")):
            raise serializers.ValidationError("Without a template, subject and text or html are required.")
        return attrs


class PushMessageInput(serializers.Serializer):
    to = RecipientField(help_text='An external id (all active devices), or {"push_token": "..."}.')
    template = strict.CharField(max_length=120, required=False)
    data = serializers.DictField(default=dict)
    title = strict.CharField(max_length=200, required=False)
    body = strict.CharField(max_length=4000, required=False)
    image = strict.URLField(required=False)
    payload = serializers.DictField(required=False, default=dict, help_text="Push data dictionary.")
    key = strict.CharField(max_length=200, required=False)
    category = strict.CharField(max_length=64, required=False, allow_blank=True, default="")

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
