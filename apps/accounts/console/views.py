"""Console pages of the accounts app: "My account" and the local "Sent mail" page."""

from __future__ import annotations

from allauth.account.models import EmailAddress
from allauth.mfa.models import Authenticator
from allauth.usersessions.models import UserSession
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.gate import mfa_setup_required
from apps.accounts.platform import platform_project_ensure
from apps.accounts.sent_mail import sent_account_mail
from apps.accounts.services import platform_staff_membership_ensure
from apps.console.access import SESSION_PROJECT
from apps.governance.models import Membership


@login_required
def my_account(request: HttpRequest) -> HttpResponse:
    user = request.user
    return render(
        request,
        "accounts/my_account.html",
        {
            "section": "my_account",
            "emails": EmailAddress.objects.filter(user=user).order_by("-primary", "email"),
            "authenticators": Authenticator.objects.filter(user=user).order_by("type", "created_at"),
            "sessions": UserSession.objects.filter(user=user).count(),
            "memberships": Membership.objects.filter(user=user).select_related("organization", "custom_role"),
            "mfa_setup_required": mfa_setup_required(user),
        },
    )


def sent_mail(request: HttpRequest) -> HttpResponse:
    """Recent account email as it went out, with its links clickable: how a newcomer on a
    machine without a mail server verifies an address. Platform staff only, unless
    ``TIDINGS_SENT_MAIL_PUBLIC`` (DEBUG, ``make run``); to anyone else it does not exist."""
    user = request.user
    if not (settings.TIDINGS_SENT_MAIL_PUBLIC or (user.is_authenticated and user.is_staff)):
        raise Http404("No such page.")
    to = request.GET.get("to", "")[:254]
    return render(
        request,
        "accounts/sent_mail.html",
        {"section": "sent_mail", "mails": sent_account_mail(limit=50, to=to), "to": to},
    )


@require_POST
@login_required
def account_templates_edit(request: HttpRequest) -> HttpResponse:
    """Platform staff: open the account email templates in the template editor."""
    if not request.user.is_staff:
        raise Http404("No such page.")
    platform_staff_membership_ensure(user=request.user)
    request.session[SESSION_PROJECT] = platform_project_ensure().pk
    return redirect("delivery_console:templates")
