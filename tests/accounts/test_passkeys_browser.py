"""WebAuthn security keys in Chromium, with a virtual authenticator: one satisfies an
organization's MFA requirement and signs in."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import MembershipFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page: Any, email: str) -> None:
    page.goto("/console/login/")
    page.fill("#id_login", email)
    page.fill("#id_password", "correct-horse-battery")
    page.click("main form button[type=submit]")


def test_a_security_key_meets_the_mfa_requirement_and_signs_in(page: Any, project: Any, settings: Any) -> None:
    # The live server speaks plain http on localhost, which browsers accept for WebAuthn.
    settings.MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = True
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "usb",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    project.organization.mfa_required = True
    project.organization.save()
    member = MembershipFactory(organization=project.organization, role="editor").user

    sign_in(page, member.email)
    page.wait_for_url("**/console/2fa/totp/activate/")
    page.goto("/console/2fa/webauthn/add/")
    page.fill("#id_name", "Desk key")
    page.click("#mfa_webauthn_add")
    page.wait_for_url(lambda url: "/webauthn/add/" not in url)
    page.goto("/console/")
    page.wait_for_url("**/console/")
    assert project.name in page.inner_text("main h1")
    page.click("header .who button[type=submit]")
    page.wait_for_url("**/console/login/")

    sign_in(page, member.email)
    page.wait_for_url("**/console/2fa/authenticate/")
    page.click("#mfa_webauthn_authenticate")
    page.wait_for_url("**/console/")
    assert project.name in page.inner_text("main h1")
