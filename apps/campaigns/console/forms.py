from __future__ import annotations

from typing import Any

from django import forms

from apps.campaigns.models import AudienceKind, CampaignSettings
from apps.delivery.models import Connector, Template
from apps.subscribers.models import Segment


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=200)
    template = forms.ModelChoiceField(queryset=Template.objects.none())
    connector = forms.ModelChoiceField(queryset=Connector.objects.none(), required=False, empty_label="Project default")
    audience_kind = forms.ChoiceField(choices=AudienceKind.choices, initial=AudienceKind.EVERYONE, label="Audience")
    audience_segment = forms.ModelChoiceField(queryset=Segment.objects.none(), required=False, label="Segment")
    audience_tag = forms.CharField(max_length=64, required=False, label="Tag")
    audience_list = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, label="Subscriber ids (one per line)"
    )
    send_at = forms.DateTimeField(required=False, label="Send at (UTC, optional)")
    max_rate = forms.IntegerField(required=False, min_value=1, label="Maximum rate (messages/s)")

    def __init__(self, *args: Any, project: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["template"].queryset = Template.objects.for_project(project).order_by("key")
        self.fields["connector"].queryset = Connector.objects.for_project(project).order_by("channel", "pk")
        self.fields["audience_segment"].queryset = Segment.objects.for_project(project).order_by("name")

    def service_kwargs(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["audience_list"] = [line.strip() for line in data["audience_list"].splitlines() if line.strip()]
        return data


class CampaignSettingsForm(forms.ModelForm):
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
