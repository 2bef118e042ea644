from __future__ import annotations

import json
from typing import Any

from django import forms


class SubscriberFilterForm(forms.Form):
    q = forms.CharField(
        required=False, label="Search", widget=forms.TextInput(attrs={"placeholder": "id, email, phone"})
    )
    tag = forms.CharField(required=False)
    segment = forms.IntegerField(required=False, widget=forms.Select)
    cursor = forms.IntegerField(required=False, widget=forms.HiddenInput)


class TagsForm(forms.Form):
    add = forms.CharField(required=False, help_text="Comma-separated tag names to add.")
    remove = forms.CharField(required=False, help_text="Comma-separated tag names to remove.")

    @staticmethod
    def names(value: str) -> list[str]:
        return [n.strip() for n in (value or "").split(",") if n.strip()]


class SegmentForm(forms.Form):
    """The name; the rules come from the rule builder's rows (or, from a script, as JSON)."""

    name = forms.CharField(max_length=200)
    rules = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean_rules(self) -> Any:
        if not self.cleaned_data.get("rules"):
            return None
        try:
            return json.loads(self.cleaned_data["rules"])
        except ValueError as exc:
            raise forms.ValidationError(f"Rules are not valid JSON: {exc}.") from None


class ImportForm(forms.Form):
    file = forms.FileField(help_text="CSV with an external_id column, or NDJSON; UTF-8.")
