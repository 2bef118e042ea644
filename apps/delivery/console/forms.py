from __future__ import annotations

import json
from typing import Any

from django import forms

from apps.delivery.console.content_form import CODE_ATTRS, EditorText
from apps.subscribers.models import Channel


class DeadLetterFilterForm(forms.Form):
    channel = forms.ChoiceField(required=False, choices=[("", "Any channel"), *Channel.choices])
    origin_kind = forms.CharField(required=False, max_length=32, label="Origin")
    error_contains = forms.CharField(required=False, max_length=200, label="Error contains")


class TemplateCreateForm(forms.Form):
    key = forms.SlugField(max_length=100)
    name = forms.CharField(max_length=200, required=False)
    channel = forms.ChoiceField(choices=Channel.choices)


class JSONTextField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 12, "class": "code", "spellcheck": "false"})

    def to_python(self, value: Any) -> Any:
        value = super().to_python(value)
        if not value:
            return {}
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc.msg} (line {exc.lineno}).") from exc
        if not isinstance(parsed, dict):
            raise forms.ValidationError("Must be a JSON object.")
        return parsed


class PreviewForm(forms.Form):
    content = JSONTextField(required=False)
    data = JSONTextField(required=False, help_text="Sample data for the preview.")
    channel = forms.ChoiceField(choices=Channel.choices, required=False)
    layout = forms.IntegerField(required=False)
    strict = forms.BooleanField(required=False)


class LayoutForm(forms.Form):
    name = forms.CharField(max_length=200)
    html = EditorText(required=True, label="HTML", widget=forms.Textarea(attrs={"rows": 18, **CODE_ATTRS}))
