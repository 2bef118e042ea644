"""MFA: an organization that requires it sends its members to set up TOTP; codes replayed
within their window are refused."""

from __future__ import annotations

from typing import Any

import pytest
from allauth.mfa.models import Authenticator
from django.test import Client

from tests.accounts.helpers import last_account_mail, totp_code
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

RIGHT = "correct-horse-battery"


@pytest.fixture
def member(project: Any) -> Any:
    project.organization.mfa_required = True
    project.organization.save()
    return MembershipFactory(organization=project.organization, role="editor").user


def sign_in(client: Client, user: Any) -> Any:
    return client.post("/console/login/", {"login": user.email, "password": RIGHT})


def set_up_totp(client: Client) -> str:
    page = client.get("/console/2fa/totp/activate/")
    assert page.status_code == 200
    secret = page.context["form"].secret
    response = client.post("/console/2fa/totp/activate/", {"code": totp_code(secret)})
    assert response.status_code == 302, response.content.decode()[:400]
    return secret


def test_a_member_without_mfa_is_sent_to_set_it_up_and_cannot_use_the_console(
    member: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = Client()
    assert sign_in(client, member).status_code == 302
    for page in ("/console/", "/console/keys/", "/console/account/"):
        response = client.get(page)
        assert response.status_code == 302 and response["Location"] == "/console/2fa/totp/activate/", page
    # allauth tells the person once the new authenticator is committed.
    with django_capture_on_commit_callbacks(execute=True):
        set_up_totp(client)
    assert client.get("/console/").status_code == 200
    assert Authenticator.objects.filter(user=member, type=Authenticator.Type.TOTP).exists()
    assert last_account_mail("mfa_changed", to=member.email).context["change"] == "An authenticator app was added"


def test_without_the_requirement_the_console_opens_without_mfa(project: Any) -> None:
    person = MembershipFactory(organization=project.organization, role="editor").user
    client = Client()
    sign_in(client, person)
    assert client.get("/console/").status_code == 200


def test_sign_in_asks_for_the_code_and_a_replayed_code_is_refused(member: Any) -> None:
    client = Client()
    sign_in(client, member)
    secret = set_up_totp(client)
    client.post("/console/logout/")

    first = Client()
    response = sign_in(first, member)
    assert response["Location"] == "/console/2fa/authenticate/"
    assert "_auth_user_id" not in first.session
    code = totp_code(secret)
    assert first.post("/console/2fa/authenticate/", {"code": code}).status_code == 302
    assert first.session["_auth_user_id"] == str(member.pk)
    assert first.get("/console/").status_code == 200

    replay = Client()
    sign_in(replay, member)
    refused = replay.post("/console/2fa/authenticate/", {"code": code})
    assert refused.status_code == 200
    assert "Incorrect code" in refused.content.decode()
    assert "_auth_user_id" not in replay.session


def test_a_wrong_code_does_not_set_up_mfa(member: Any) -> None:
    client = Client()
    sign_in(client, member)
    secret = client.get("/console/2fa/totp/activate/").context["form"].secret
    wrong = "000000" if totp_code(secret) != "000000" else "111111"
    response = client.post("/console/2fa/totp/activate/", {"code": wrong})
    assert response.status_code == 200
    assert not Authenticator.objects.filter(user=member).exists()
    assert client.get("/console/").status_code == 302


def test_totp_activation_refuses_a_post_without_its_csrf_token(member: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(member)
    assert client.post("/console/2fa/totp/activate/", {"code": "123456"}).status_code == 403
    assert not Authenticator.objects.filter(user=member).exists()


def test_my_account_links_password_email_mfa_and_sessions(project: Any) -> None:
    person = MembershipFactory(organization=project.organization, role="viewer").user
    client = Client()
    sign_in(client, person)
    page = client.get("/console/account/").content.decode()
    for link in ("/console/password/change/", "/console/email/", "/console/2fa/", "/console/sessions/"):
        assert f'href="{link}"' in page
    sessions = client.get("/console/sessions/")
    assert sessions.status_code == 200


def test_ending_the_other_sessions_signs_them_out(project: Any) -> None:
    person = MembershipFactory(organization=project.organization, role="viewer").user
    laptop, phone = Client(), Client()
    sign_in(laptop, person)
    sign_in(phone, person)
    assert phone.get("/console/").status_code == 200
    response = laptop.post("/console/sessions/", {"action": "logout"})
    assert response.status_code == 302
    assert laptop.get("/console/").status_code == 200
    assert phone.get("/console/").status_code == 302
