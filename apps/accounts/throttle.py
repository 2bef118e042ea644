"""Which account a sign-in attempt is for, as django-axes counts failures.

The console signs in by email, Django admin and the CMS by username: both name the same
account to axes, so wrong passwords on one page count towards the lock on every page.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.http import HttpRequest


def sign_in_account(request: HttpRequest | None, credentials: dict[str, Any] | None) -> str:
    credentials = credentials or {}
    given = credentials.get("email") or credentials.get("username")
    if not given and request is not None:
        data = getattr(request, "POST", {})
        given = data.get("login") or data.get("username")
    value = str(given or "").strip()
    if "@" in value:
        from allauth.account.models import EmailAddress

        address = EmailAddress.objects.filter(email__iexact=value).select_related("user").first()
        if address is not None:
            return address.user.get_username()
        user = get_user_model().objects.filter(email__iexact=value).first()
        if user is not None:
            return user.get_username()
        return value.lower()
    return value
