"""Input shapes for the campaigns API. References are resolved inside the key's project
only, so another project's template, connector or segment is simply "not found"."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.campaigns.models import AudienceKind, CampaignSettings
from apps.core import strict_fields as strict
from apps.delivery.models import Connector, Template
from apps.subscribers.models import Segment


class AudienceInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=AudienceKind.choices, default=AudienceKind.EVERYONE)
    segment = serializers.IntegerField(required=False, allow_null=True)
    tag = strict.CharField(required=False, allow_blank=True, max_length=64)
    list = serializers.ListField(child=strict.CharField(max_length=255), required=False, max_length=100_000)


class CampaignInput(serializers.Serializer):
    name = strict.CharField(max_length=200)
    template = strict.CharField(max_length=100, help_text="Template key.")
    connector = serializers.IntegerField(required=False, allow_null=True)
    audience = AudienceInput(required=False)
    send_at = serializers.DateTimeField(required=False, allow_null=True)
    max_rate = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=1_000_000)
    initial_rate = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=1_000_000)
    category = strict.CharField(required=False, max_length=64, allow_blank=True)

    def resolve(self, project: Any) -> dict[str, Any]:
        """Validated data as service keyword arguments (only the fields that were sent)."""
        data = dict(self.validated_data)
        out: dict[str, Any] = {}
        errors: dict[str, str] = {}
        if "template" in data:
            out["template"] = Template.objects.for_project(project).filter(key=data["template"]).first()
            if out["template"] is None:
                errors["template"] = f"No template {data['template']!r} in this project."
        if "connector" in data:
            out["connector"] = None
            if data["connector"] is not None:
                out["connector"] = Connector.objects.for_project(project).filter(pk=data["connector"]).first()
                if out["connector"] is None:
                    errors["connector"] = "No such connector in this project."
        if "audience" in data:
            audience = data["audience"]
            out["audience_kind"] = audience.get("kind", AudienceKind.EVERYONE)
            out["audience_tag"] = audience.get("tag", "")
            out["audience_list"] = audience.get("list", [])
            out["audience_segment"] = None
            if audience.get("segment") is not None:
                out["audience_segment"] = Segment.objects.for_project(project).filter(pk=audience["segment"]).first()
                if out["audience_segment"] is None:
                    errors["audience.segment"] = "No such segment in this project."
        for name in ("name", "send_at", "max_rate", "initial_rate", "category"):
            if name in data:
                out[name] = data[name]
        if errors:
            raise serializers.ValidationError(errors, code="not_found")
        return out


class CampaignSettingsInput(serializers.ModelSerializer):
    class Meta:
        model = CampaignSettings
        fields = [
            "bounce_threshold",
            "complaint_threshold",
            "window_seconds",
            "min_sample",
            "min_rate",
            "max_rate",
            "initial_rate",
            "increase_step",
            "decrease_factor",
        ]
        extra_kwargs = {name: {"required": False} for name in fields}
