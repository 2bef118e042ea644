"""Input shapes of the templates and layouts API, and its answers for the OpenAPI document.

Only shapes: what content a channel needs, what HTML may carry and what compiles are the
services' rules (``apps.delivery.services.content``), the same ones the console editor meets."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core import strict_fields as strict
from apps.core.query import QueryParameters
from apps.delivery.models import Layout, Template, TemplateVersion
from apps.subscribers.models import Channel

# A layout is an email shell: far below the body limit, far above any real one.
MAX_LAYOUT_CHARS = 200_000


class TemplateIn(serializers.Serializer):
    key = strict.SlugField(max_length=100, help_text="Stable key your code sends with, unique in the project.")
    channel = serializers.ChoiceField(choices=Channel.choices, help_text="The channel the template is made for.")
    name = strict.CharField(max_length=200, required=False, help_text="For people; the key when left out.")
    description = strict.CharField(max_length=2000, required=False, allow_blank=True)


class VersionIn(serializers.Serializer):
    content = strict.JSONObjectField(
        help_text='One block per channel, e.g. {"email": {"subject": "…", "text": "…", "html": "…"}}.'
    )
    layout = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, required=False, allow_null=True, help_text="Id of an email layout."
    )
    strict = serializers.BooleanField(
        required=False, default=False, help_text="A variable missing at send time fails the message."
    )
    publish = serializers.BooleanField(required=False, default=False, help_text="Publish at once, not a draft.")


class PreviewIn(serializers.Serializer):
    data = strict.JSONObjectField(required=False, help_text="The notification's data, as a publish would send it.")
    subscriber = strict.CharField(
        max_length=255, required=False, help_text="External id of a subscriber whose fields the template sees."
    )
    version = serializers.IntegerField(
        min_value=1, max_value=2**31 - 1, required=False, help_text="Version number; the newest when left out."
    )


class LayoutIn(serializers.Serializer):
    name = strict.CharField(max_length=200, help_text="Unique in the project.")
    html = strict.CharField(
        max_length=MAX_LAYOUT_CHARS,
        trim_whitespace=False,
        help_text="Email HTML placing the message with {{ content }}.",
    )


class ListQuery(QueryParameters):
    cursor = strict.CharField(required=False, max_length=100, help_text="next_cursor of the previous page.")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=200, default=50)


@extend_schema_field({"type": "object", "additionalProperties": True})
class _Object(serializers.JSONField):
    pass


class TemplateOut(serializers.Serializer):
    key = serializers.CharField()
    channel = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    latest_version = serializers.IntegerField(allow_null=True, help_text="The newest version, draft or not.")
    published_version = serializers.IntegerField(allow_null=True, help_text="What a send by key uses.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class TemplatePageOut(serializers.Serializer):
    results = TemplateOut(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class VersionOut(serializers.Serializer):
    template = serializers.CharField()
    number = serializers.IntegerField()
    content = _Object()
    channels = serializers.ListField(child=serializers.CharField())
    layout = serializers.IntegerField(allow_null=True)
    strict = serializers.BooleanField()
    published_at = serializers.DateTimeField(allow_null=True, help_text="Null for a draft.")
    created_at = serializers.DateTimeField()


class PreviewOut(serializers.Serializer):
    template = serializers.CharField()
    version = serializers.IntegerField()
    published = serializers.BooleanField()
    rendered = serializers.DictField(child=_Object(), help_text="Per channel, the message as it would be sent.")


class LayoutOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    html = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class LayoutPageOut(serializers.Serializer):
    results = LayoutOut(many=True)
    next_cursor = serializers.CharField(allow_null=True)


def template_out(template: Template) -> dict[str, Any]:
    return {
        "key": template.key,
        "channel": template.channel,
        "name": template.name,
        "description": template.description,
        "latest_version": getattr(template, "latest_version", None),
        "published_version": getattr(template, "published_version", None),
        "created_at": template.created_at,
        "updated_at": template.updated_at,
    }


def version_out(version: TemplateVersion, template: Template) -> dict[str, Any]:
    return {
        "template": template.key,
        "number": version.number,
        "content": version.content,
        "channels": version.channels,
        "layout": version.layout_id,
        "strict": version.strict,
        "published_at": version.published_at,
        "created_at": version.created_at,
    }


def layout_out(layout: Layout) -> dict[str, Any]:
    return {
        "id": layout.pk,
        "name": layout.name,
        "html": layout.html,
        "created_at": layout.created_at,
        "updated_at": layout.updated_at,
    }
