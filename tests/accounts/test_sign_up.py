"""Sign-up opens an organization, a first project and an owner membership; the console
opens once the address is verified."""

from __future__ import annotations

import time

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.test import Client

from apps.delivery.models import Delivery
from apps.governance.models import Membership, Role
from apps.projects.models import Organization, Project
from tests.accounts.helpers import PASSWORD, last_account_mail, link_path, signup_data
from tests.factories import OrganizationFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_sign_up_opens_organization_project_and_owner_membership_and_sends_verification(client: Client) -> None:
    response = client.post("/console/signup/", signup_data())
    assert response.status_code == 302
    assert response["Location"] == "/console/confirm-email/"

    user = get_user_model().objects.get(email="ada@example.com")
    membership = Membership.objects.select_related("organization").get(user=user)
    assert membership.role == Role.OWNER
    assert membership.organization.name == "Analytical Engines"
    assert membership.organization.default_timezone == "Europe/London"
    project = Project.objects.get(organization=membership.organization)
    assert (project.name, project.timezone) == ("Production", "Europe/London")
    assert EmailAddress.objects.get(user=user).verified is False

    mail = last_account_mail("verify_email", to="ada@example.com")
    assert mail.lane == "high" and mail.context["link"].startswith("http://testserver/console/confirm-email/")
    # Not verified yet: the console does not open.
    assert "_auth_user_id" not in client.session or client.get("/console/").status_code == 302


def test_the_verification_link_confirms_the_address_and_opens_the_console(client: Client) -> None:
    client.post("/console/signup/", signup_data())
    path = link_path(last_account_mail("verify_email"))
    assert client.get(path).status_code == 200
    response = client.post(path)
    assert response.status_code == 302
    assert EmailAddress.objects.get(email="ada@example.com").verified is True
    home = client.get("/console/")
    assert home.status_code == 200
    assert home.context["current_project"].name == "Production"


def test_a_second_organization_with_a_taken_name_still_signs_up() -> None:
    OrganizationFactory(name="Analytical Engines", slug="analytical-engines")
    response = Client().post("/console/signup/", signup_data())
    assert response.status_code == 302
    assert Organization.objects.filter(name="Analytical Engines").count() == 2


def test_unknown_timezone_is_refused_on_the_form_and_creates_nothing(client: Client) -> None:
    response = client.post("/console/signup/", signup_data(timezone="Mars/Olympus_Mons"))
    assert response.status_code == 200
    assert "is not an IANA timezone name" in response.content.decode()
    assert not get_user_model().objects.filter(email="ada@example.com").exists()
    assert not Organization.objects.exists()
    assert not Project.objects.exists()


def test_unnamed_organization_is_refused(client: Client) -> None:
    response = client.post("/console/signup/", signup_data(organization_name="!!!"))
    assert response.status_code == 200
    assert "Name your organization" in response.content.decode()
    assert not get_user_model().objects.filter(email="ada@example.com").exists()


def test_a_wrong_verification_key_verifies_nothing(client: Client) -> None:
    client.post("/console/signup/", signup_data())
    path = link_path(last_account_mail("verify_email"))
    forged = path.rstrip("/")[:-4] + "abcd/"
    page = client.get(forged)
    assert "expired or is invalid" in page.content.decode()
    client.post(forged)
    assert EmailAddress.objects.get(email="ada@example.com").verified is False
    assert client.get("/console/").status_code == 302


def test_an_expired_verification_key_verifies_nothing(client: Client, settings) -> None:
    settings.ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS = 0
    client.post("/console/signup/", signup_data())
    path = link_path(last_account_mail("verify_email"))
    time.sleep(1.1)
    assert "expired or is invalid" in client.get(path).content.decode()
    client.post(path)
    assert EmailAddress.objects.get(email="ada@example.com").verified is False


def test_an_unverified_person_cannot_sign_in_and_a_session_of_theirs_does_not_open_the_console() -> None:
    person = UserFactory(email="grace@example.com", verified_email=False)
    EmailAddress.objects.create(user=person, email=person.email, primary=True, verified=False)
    client = Client()
    response = client.post("/console/login/", {"login": "grace@example.com", "password": "correct-horse-battery"})
    assert response.status_code == 302 and response["Location"] == "/console/confirm-email/"
    assert "_auth_user_id" not in client.session
    # A session made elsewhere (Django admin, before verification was required).
    client.force_login(person)
    gated = client.get("/console/")
    assert gated.status_code == 302 and gated["Location"] == "/console/email/"


def test_sign_in_is_by_email_and_a_browser_not_seen_before_sends_a_new_sign_in_notice(client: Client) -> None:
    person = UserFactory(email="linus@example.com")
    response = client.post("/console/login/", {"login": "LINUS@example.com", "password": "correct-horse-battery"})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(person.pk)
    # The first sign-in of an account is no news; nor is this browser signing in again.
    client.post("/console/logout/")
    client.post("/console/login/", {"login": "linus@example.com", "password": "correct-horse-battery"})
    assert not Delivery.objects.filter(origin_id="new_sign_in").exists()

    elsewhere = Client(HTTP_USER_AGENT="Firefox on a borrowed laptop")
    elsewhere.post("/console/login/", {"login": "linus@example.com", "password": "correct-horse-battery"})
    notice = last_account_mail("new_sign_in", to="linus@example.com")
    assert notice.context["link"] == "http://testserver/console/sessions/"
    assert notice.context["user_agent"] == "Firefox on a borrowed laptop"
    assert Delivery.objects.filter(origin_id="new_sign_in").count() == 1
    # Not by username: that is the admin's way in, not the console's.
    by_name = Client().post("/console/login/", {"login": person.username, "password": "correct-horse-battery"})
    assert by_name.status_code == 200


def test_password_reset_mails_a_link_that_sets_a_new_password() -> None:
    person = UserFactory(email="barbara@example.com")
    client = Client()
    client.post("/console/password/reset/", {"email": "barbara@example.com"})
    path = link_path(last_account_mail("password_reset", to="barbara@example.com"))
    form = client.get(path, follow=True)
    assert form.status_code == 200
    done = client.post(
        form.redirect_chain[-1][0] if form.redirect_chain else path,
        {
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert done.status_code == 302
    person.refresh_from_db()
    assert person.check_password(PASSWORD)


def test_email_change_verifies_the_new_address_then_tells_the_old_one() -> None:
    person = UserFactory(email="old@example.com")
    client = Client()
    client.force_login(person)
    response = client.post("/console/email/", {"action_add": "", "email": "new@example.com"})
    assert response.status_code == 302
    path = link_path(last_account_mail("verify_email", to="new@example.com"))
    client.post(path)
    assert EmailAddress.objects.get(user=person, primary=True).email == "new@example.com"
    notice = last_account_mail("email_changed", to="old@example.com")
    assert notice.context["new_email"] == "new@example.com"


@pytest.mark.parametrize("page", ["/console/signup/", "/console/login/", "/console/password/reset/"])
def test_account_forms_refuse_a_post_without_its_csrf_token(page: str) -> None:
    client = Client(enforce_csrf_checks=True)
    data = {**signup_data(), "login": "ada@example.com", "password": PASSWORD}
    response = client.post(page, data)
    assert response.status_code == 403
    assert not get_user_model().objects.filter(email="ada@example.com").exists()
    assert "_auth_user_id" not in client.session


def test_a_sign_in_notice_that_cannot_be_queued_does_not_stop_the_sign_in(settings) -> None:
    person = UserFactory(email="edsger@example.com")
    Client().post("/console/login/", {"login": person.email, "password": "correct-horse-battery"})
    # A real provider named without what it needs: the notice is refused, loudly in the log.
    settings.TIDINGS_ACCOUNT_MAIL_PROVIDER = "smtp"
    settings.TIDINGS_ACCOUNT_MAIL_SETTINGS = {}
    other = Client()
    response = other.post("/console/login/", {"login": person.email, "password": "correct-horse-battery"})
    assert response.status_code == 302
    assert other.session["_auth_user_id"] == str(person.pk)
    assert not Delivery.objects.filter(origin_id="new_sign_in").exists()
