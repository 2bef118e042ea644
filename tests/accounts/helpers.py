"""What account tests share: the account mail a flow sent, and TOTP codes as allauth makes them."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from allauth.mfa.totp.internal.auth import format_hotp_value, hotp_value

from apps.accounts.mail import ORIGIN_KIND
from apps.delivery.models import Delivery

PASSWORD = "a-Long-and-unusual-passphrase-42"


def last_account_mail(kind: str, to: str | None = None) -> Delivery:
    mails = Delivery.objects.filter(origin_kind=ORIGIN_KIND, origin_id=kind)
    if to is not None:
        mails = mails.filter(destination__iexact=to)
    return mails.latest("id")


def link_path(delivery: Delivery) -> str:
    return urlsplit(delivery.context["link"]).path


def totp_code(secret: str, *, offset: int = 0) -> str:
    """The code an authenticator app shows now, computed the way allauth checks it."""
    return format_hotp_value(hotp_value(secret, int(time.time()) // 30 + offset))


def signup_data(**overrides: Any) -> dict[str, str]:
    return {
        "email": "ada@example.com",
        "password1": PASSWORD,
        "password2": PASSWORD,
        "organization_name": "Analytical Engines",
        "project_name": "Production",
        "timezone": "Europe/London",
        **overrides,
    }
