"""The whole account journey in Chromium: sign up, verify from "Sent mail", MFA required,
a member sets up TOTP and signs in with a code."""

from __future__ import annotations

import time
from typing import Any

import pytest

from apps.projects.models import Organization
from tests.accounts.helpers import PASSWORD, totp_code
from tests.delivery.conftest import redis_clear
from tests.factories import MembershipFactory

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def open_link_from_sent_mail(page: Any, to: str, kind: str) -> None:
    """Reload "Sent mail" until the worker has sent the message, then follow its link."""
    link = page.locator(f"[data-testid=sent-mail][data-kind={kind}] .sent-mail-links a").first
    deadline = time.monotonic() + 30
    while True:
        page.goto(f"/console/sent-mail/?to={to}")
        if link.count():
            break
        assert time.monotonic() < deadline, "the account email was not sent"
        time.sleep(0.5)
    link.click()


def sign_out(page: Any) -> None:
    page.click("header .who button[type=submit]")
    page.wait_for_url("**/console/login/")


def test_sign_up_verify_require_mfa_and_sign_in_with_a_code(page: Any, settings: Any, celery_worker: Any) -> None:
    redis_clear()
    settings.TIDINGS_SENT_MAIL_PUBLIC = True

    page.goto("/console/login/")
    page.click("text=Create an account")
    page.fill("#id_email", "owner@example.com")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.fill("#id_organization_name", "Lovelace Labs")
    page.fill("#id_project_name", "Production")
    page.fill("#id_timezone", "Mars/Olympus_Mons")
    page.click("[data-testid=signup-form] button[type=submit]")
    assert "is not an IANA timezone name" in page.inner_text("main")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.fill("#id_timezone", "Europe/London")
    page.click("[data-testid=signup-form] button[type=submit]")
    page.wait_for_url("**/console/confirm-email/")

    open_link_from_sent_mail(page, "owner@example.com", "verify_email")
    page.wait_for_url("**/console/confirm-email/*/")
    page.click("main form button[type=submit]")
    page.wait_for_url("**/console/")
    assert "Production" in page.inner_text("main h1")
    assert "Lovelace Labs" in page.inner_text("main")

    # No organization settings page yet: the owner's switch is set directly.
    organization = Organization.objects.get(name="Lovelace Labs")
    member = MembershipFactory(organization=organization, role="editor", user__email="member@example.com").user
    Organization.objects.filter(pk=organization.pk).update(mfa_required=True)
    sign_out(page)

    page.fill("#id_login", member.email)
    page.fill("#id_password", "correct-horse-battery")
    page.click("main form button[type=submit]")
    page.wait_for_url("**/console/2fa/totp/activate/")
    assert "requires two-factor authentication" in page.inner_text("main")
    page.goto("/console/keys/")
    page.wait_for_url("**/console/2fa/totp/activate/")
    secret = page.input_value("#authenticator_secret")
    page.fill("#id_code", totp_code(secret))
    page.click("main form button[type=submit]")
    page.wait_for_url(lambda url: "/totp/activate/" not in url)
    page.goto("/console/")
    assert "Production" in page.inner_text("main h1")
    sign_out(page)

    page.fill("#id_login", member.email)
    page.fill("#id_password", "correct-horse-battery")
    page.click("main form button[type=submit]")
    page.wait_for_url("**/console/2fa/authenticate/")
    page.fill("#id_code", totp_code(secret))
    page.click("form[action='/console/2fa/authenticate/'] button[type=submit]")
    page.wait_for_url("**/console/")
    assert "Production" in page.inner_text("main h1")
