"""allauth adapters: account email through Tidings' delivery, secrets encrypted at rest."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from allauth.account import app_settings as account_settings
from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.authentication import get_authentication_records
from allauth.mfa.adapter import DefaultMFAAdapter
from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone

from apps.accounts.mail import account_mail_send
from apps.core.clients import client_ip_address
from apps.core.crypto import decrypt_text, encrypt_text
from apps.core.errors import ApplicationError

log = logging.getLogger(__name__)

# A browser that signed in to an account before carries a signed cookie naming it; a
# sign-in without one is a "new sign-in" the account's owner is told about.
DEVICE_COOKIE = "tidings_known_device"
DEVICE_SALT = "tidings.accounts.known-device"
DEVICE_COOKIE_AGE = timedelta(days=365)
DEVICE_COOKIE_USERS = 5

# allauth's email templates -> Tidings' account email kinds. What allauth sends that has
# no kind of its own (a password changed, an address removed…) is left out, logged.
VERIFY = {"account/email/email_confirmation_signup", "account/email/email_confirmation"}
MFA_CHANGES = {
    "mfa/email/totp_activated": "An authenticator app was added",
    "mfa/email/totp_deactivated": "The authenticator app was removed",
    "mfa/email/recovery_codes_generated": "New recovery codes were generated",
    "mfa/email/webauthn_added": "A security key or passkey was added",
    "mfa/email/webauthn_removed": "A security key or passkey was removed",
}


def _absolute(request: HttpRequest | None, path: str) -> str:
    if request is not None:
        return request.build_absolute_uri(path)
    return settings.WAGTAILADMIN_BASE_URL.rstrip("/") + path


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return bool(getattr(settings, "TIDINGS_SIGNUP_OPEN", True))

    def is_reauthentication_required(self, *, app: str, **kwargs: Any) -> bool:
        """A password typed moments ago counts as re-authentication: a member sent to set up
        MFA right after signing in is not asked for it twice."""
        if not super().is_reauthentication_required(app=app, **kwargs):
            return False
        request = getattr(self, "request", None)
        if request is None or not request.user.is_authenticated:
            return True
        signed_in = [r for r in get_authentication_records(request, request.user) if r.get("method") == "password"]
        return not signed_in or time.time() - float(signed_in[-1]["at"]) >= account_settings.REAUTHENTICATION_TIMEOUT

    def get_client_ip(self, request: HttpRequest) -> str:
        # The same address the sign-in lock counts, trusted proxies and all.
        return client_ip_address(request) or ""

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        request = context.get("request") or getattr(self, "request", None)
        if template_prefix in VERIFY:
            account_mail_send(kind="verify_email", to=email, context={"link": str(context["activate_url"])})
        elif template_prefix == "account/email/password_reset_key":
            account_mail_send(kind="password_reset", to=email, context={"link": str(context["password_reset_url"])})
        elif template_prefix == "account/email/email_changed":
            account_mail_send(
                kind="email_changed",
                to=email,
                context={"old_email": str(context["from_email"]), "new_email": str(context["to_email"])},
            )
        elif template_prefix in MFA_CHANGES:
            account_mail_send(
                kind="mfa_changed",
                to=email,
                context={"change": MFA_CHANGES[template_prefix], "link": _absolute(request, reverse("mfa_index"))},
            )
        else:
            log.info("account email %s to %s has no Tidings kind; not sent", template_prefix, email)

    def login(self, request: HttpRequest, user: Any) -> None:
        # Django's login() stamps last_login: whether this is the very first sign-in is
        # only known before it.
        request.tidings_first_sign_in = user.last_login is None  # type: ignore[attr-defined]
        super().login(request, user)

    def post_login(self, request: HttpRequest, user: Any, **kwargs: Any) -> HttpResponse:
        """After a sign-in from a browser this account has not used before (not the first
        sign-in, which follows sign-up), the account is told, with a link to its sessions."""
        response = super().post_login(request, user, **kwargs)
        known = known_devices(request, user)
        first = getattr(request, "tidings_first_sign_in", False) or kwargs.get("signup")
        email = kwargs.get("email") or user.email
        if user.pk not in known:
            response.set_cookie(
                DEVICE_COOKIE,
                signing.dumps([user.pk, *known][:DEVICE_COOKIE_USERS], salt=DEVICE_SALT),
                max_age=int(DEVICE_COOKIE_AGE.total_seconds()),
                secure=request.is_secure(),
                httponly=True,
                samesite="Lax",
            )
        if user.pk not in known and not first and email:
            new_sign_in_notify(request, email)
        return response


def new_sign_in_notify(request: HttpRequest, email: str) -> None:
    # A notice that cannot be queued (a misconfigured provider) must not stop the sign-in.
    try:
        account_mail_send(
            kind="new_sign_in",
            to=email,
            context={
                "signed_in_at": timezone.now().strftime("%Y-%m-%d %H:%M UTC"),
                "ip_address": client_ip_address(request) or "an unknown address",
                "user_agent": (request.META.get("HTTP_USER_AGENT") or "an unknown browser")[:200],
                "link": _absolute(request, reverse("usersessions_list")),
            },
        )
    except ApplicationError:
        log.exception("new sign-in notice to %s could not be queued", email)


def known_devices(request: HttpRequest, user: Any) -> list[int]:
    """The accounts that have signed in from this browser before (its signed cookie)."""
    try:
        value = signing.loads(request.COOKIES.get(DEVICE_COOKIE, ""), salt=DEVICE_SALT, max_age=DEVICE_COOKIE_AGE)
    except signing.BadSignature:
        return []
    return [pk for pk in value if isinstance(pk, int)] if isinstance(value, list) else []


class MfaAdapter(DefaultMFAAdapter):
    """TOTP secrets and recovery-code seeds are encrypted with Tidings' secret keys."""

    def encrypt(self, text: str) -> str:
        return encrypt_text(text)

    def decrypt(self, encrypted_text: str) -> str:
        return decrypt_text(encrypted_text)
