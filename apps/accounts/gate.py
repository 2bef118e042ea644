"""What stands between a signed-in person and the console: a verified address and, where
their organization requires it, a second factor.

allauth refuses to sign in an unverified address, but a session can also come from
elsewhere (Django admin, a session made before verification was required), so the
console checks again. A member of an organization with ``mfa_required`` and no
authenticator is sent to set one up and cannot use the console until then. allauth's own
pages (email addresses, MFA set-up, sign-out) stay open, or nobody could comply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from allauth.mfa.models import Authenticator
from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from apps.projects.models import Organization

# Once a session has shown a verified address it need not look again: verification is
# never taken back, and an address added later stays unverified beside the verified one.
SESSION_VERIFIED = "accounts_email_verified"
SECOND_FACTORS = (Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN)
OPEN_PAGES = frozenset({"apps.accounts.console.views.sent_mail"})


def has_verified_email(user: Any) -> bool:
    from allauth.account.models import EmailAddress

    return EmailAddress.objects.filter(user=user, verified=True).exists()


def mfa_setup_required(user: Any) -> bool:
    """True when one of the person's organizations requires MFA and they have no second factor."""
    if not Organization.objects.filter(memberships__user=user, mfa_required=True).exists():
        return False
    return not Authenticator.objects.filter(user=user, type__in=SECOND_FACTORS).exists()


def console_gate(request: HttpRequest) -> HttpResponse | None:
    """The redirect that keeps this person out of the console for now, or None."""
    user = request.user
    if not request.session.get(SESSION_VERIFIED):
        if not has_verified_email(user):
            messages.warning(request, "Verify your email address to open the console: we sent you a link.")
            return redirect("account_email")
        request.session[SESSION_VERIFIED] = True
    if mfa_setup_required(user):
        messages.warning(
            request,
            "Your organization requires two-factor authentication: set up an authenticator app to continue.",
        )
        return redirect("mfa_activate_totp")
    return None


class ConsoleGateMiddleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse | Awaitable[HttpResponse]:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        # Django runs this hook in a thread under ASGI, so the queries are safe here.
        if not request.path.startswith("/console/"):
            return None
        module = getattr(view_func, "__module__", "") or ""
        if module.startswith("allauth.") or f"{module}.{getattr(view_func, '__name__', '')}" in OPEN_PAGES:
            return None
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        return console_gate(request)
