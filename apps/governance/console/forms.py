from __future__ import annotations

from datetime import timedelta

from django import forms

from apps.governance.models import ApiKey
from apps.governance.scopes import ALL_SCOPES

GRACE_CHOICES = [
    ("0", "Revoke the old key now"),
    ("3600", "Keep the old key for 1 hour"),
    ("86400", "Keep the old key for 24 hours"),
    ("604800", "Keep the old key for 7 days"),
]


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(max_length=100)
    kind = forms.ChoiceField(choices=ApiKey.Kind.choices, label="Type")
    ceiling = forms.ChoiceField(
        choices=[("", "—"), ("public", "Public"), ("secret", "Secret")],
        required=False,
        help_text="Restricted keys only: the type whose scopes bound this key.",
    )
    scopes = forms.MultipleChoiceField(
        choices=[(s, s) for s in ALL_SCOPES], required=False, widget=forms.CheckboxSelectMultiple
    )

    def clean(self) -> dict:
        data = super().clean()
        if data.get("kind") == ApiKey.Kind.RESTRICTED:
            if not data.get("ceiling"):
                self.add_error("ceiling", "A restricted key needs a ceiling.")
            if not data.get("scopes"):
                self.add_error("scopes", "Choose at least one scope.")
        elif data.get("scopes"):
            self.add_error("scopes", "Only restricted keys take an explicit scope list.")
        return data


class ApiKeyRotateForm(forms.Form):
    grace = forms.ChoiceField(choices=GRACE_CHOICES, initial="0")

    def grace_period(self) -> timedelta:
        return timedelta(seconds=int(self.cleaned_data["grace"]))
