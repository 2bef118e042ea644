"""The console's sign-in and sign-up forms, built on allauth's."""

from __future__ import annotations

from typing import Any
from zoneinfo import available_timezones

from allauth.account.forms import LoginForm, SignupForm
from django import forms
from django.db import transaction
from django.utils.text import slugify

from apps.accounts.services import account_open
from apps.accounts.signin import SignInLockMixin
from apps.core.time import is_valid_timezone


class SignInForm(SignInLockMixin, LoginForm):
    """allauth's sign-in by email, reporting django-axes' lock as the lock."""


class SignUpForm(SignupForm):
    organization_name = forms.CharField(label="Organization", max_length=200)
    project_name = forms.CharField(label="First project", max_length=200, initial="Production")
    timezone = forms.CharField(
        label="Project timezone",
        max_length=64,
        help_text="An IANA name such as Europe/Lisbon: journeys wait in it when a subscriber has none.",
        widget=forms.TextInput(attrs={"list": "timezones", "autocomplete": "off"}),
    )

    @property
    def timezone_choices(self) -> list[str]:
        return sorted(available_timezones())

    def clean_timezone(self) -> str:
        value = self.cleaned_data["timezone"].strip()
        if not is_valid_timezone(value):
            raise forms.ValidationError(
                f"“{value}” is not an IANA timezone name (for example Europe/Lisbon or America/New_York).",
                code="invalid_timezone",
            )
        return value

    def clean_organization_name(self) -> str:
        return _named(self.cleaned_data["organization_name"], "Name your organization")

    def clean_project_name(self) -> str:
        return _named(self.cleaned_data["project_name"], "Name your first project")

    def save(self, request: Any) -> Any:
        # The person and what they own are made together or not at all; the form has
        # checked everything account_open checks, so a refusal here is a bug, not input.
        with transaction.atomic():
            user = super().save(request)
            account_open(
                user=user,
                organization_name=self.cleaned_data["organization_name"],
                project_name=self.cleaned_data["project_name"],
                timezone=self.cleaned_data["timezone"],
            )
        return user


def _named(value: str, ask: str) -> str:
    value = value.strip()
    if not slugify(value):
        raise forms.ValidationError(f"{ask}, with letters or digits.", code="invalid_name")
    return value
