"""One form per provider, built from its field list; the adapter validates on save."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.core.crypto import last_characters
from apps.delivery.models import Connector

from .fields import Field, ProviderForm

KEEP = "Stored — leave blank to keep"


def _form_field(spec: Field, *, stored: str | None) -> forms.Field:
    common: dict[str, Any] = {"label": spec.label, "help_text": spec.help, "required": spec.required and stored is None}
    if spec.secret:
        widget: forms.Widget = (
            forms.Textarea(attrs={"rows": 4, "autocomplete": "off"})
            if spec.kind == "textarea"
            else forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"})
        )
        if stored is not None:
            hint = last_characters(stored)
            widget.attrs["placeholder"] = f"{KEEP} (…{hint})" if hint else KEEP
        # Never render a stored secret back, not even into a textarea.
        return forms.CharField(widget=widget, strip=True, **common)
    if spec.kind == "number":
        return forms.FloatField(**common)
    if spec.kind == "choice":
        return forms.ChoiceField(choices=spec.choices, **common)
    if spec.kind == "email":
        return forms.EmailField(**common)
    if spec.kind == "textarea":
        return forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), **common)
    return forms.CharField(**common)


class ConnectorForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    is_default = forms.BooleanField(required=False, label="Default for this channel")
    secondary = forms.ModelChoiceField(queryset=Connector.objects.none(), required=False, label="Failover connector")

    def __init__(
        self, *args: Any, provider: ProviderForm, project: Any, connector: Connector | None = None, **kwargs: Any
    ):
        self.provider = provider
        self.connector = connector
        self.stored: dict[str, Any] = connector.credentials if connector else {}
        initial = kwargs.pop("initial", {}) or {}
        if connector is not None:
            initial.update(
                {"name": connector.name, "is_default": connector.is_default, "secondary": connector.secondary}
            )
            initial.update(connector.settings or {})
        super().__init__(*args, initial=initial, **kwargs)
        others = Connector.objects.for_project(project).filter(channel=provider.channel)
        if connector is not None:
            others = others.exclude(pk=connector.pk)
        self.fields["secondary"].queryset = others
        for spec in provider.fields:
            stored = self.stored.get(spec.name) if spec.secret else None
            self.fields[spec.name] = _form_field(spec, stored=str(stored) if stored is not None else None)

    def credentials_and_settings(self) -> tuple[dict[str, Any], dict[str, Any]]:
        credentials: dict[str, Any] = {}
        settings: dict[str, Any] = {}
        for spec in self.provider.fields:
            value = self.cleaned_data.get(spec.name)
            if spec.secret:
                if value:
                    credentials[spec.name] = value
                elif spec.name in self.stored:
                    credentials[spec.name] = self.stored[spec.name]
            elif value not in (None, ""):
                settings[spec.name] = int(value) if spec.kind == "number" and float(value).is_integer() else value
        return credentials, settings


class SendTestForm(forms.Form):
    destination = forms.CharField(
        max_length=1024,
        required=False,
        help_text="Email address, phone number, device token, channel id or webhook URL, by channel.",
    )
