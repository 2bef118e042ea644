"""The "Sent mail" page: platform staff only, unless the local setting opens it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from apps.accounts.mail import account_mail_send
from apps.accounts.platform import platform_project_ensure
from apps.delivery.dispatch.sent_content import sent_content_pack
from apps.delivery.models import Delivery, SentContent
from apps.governance.models import Membership
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LINK = "http://testserver/console/confirm-email/Mg:1abc:xyz/"


def sent_verification(to: str = "ada@example.com") -> Delivery:
    """An account email as the dispatcher leaves it once sent: state and kept content."""
    account_mail_send(kind="verify_email", to=to, context={"link": LINK})
    project = platform_project_ensure()
    delivery = Delivery.objects.for_project(project).latest("id")
    Delivery.objects.filter(pk=delivery.pk).update(state="sent", sent_at=timezone.now())
    content = {"subject": "Verify your email address for Tidings", "text": f"Open {LINK}", "html": "<p>x</p>"}
    SentContent.objects.create(
        project=project, delivery=delivery, created_at=timezone.now(), content=sent_content_pack(content)
    )
    return delivery


def test_hidden_from_everyone_but_platform_staff_by_default(settings) -> None:
    settings.TIDINGS_SENT_MAIL_PUBLIC = False
    sent_verification()
    assert Client().get("/console/sent-mail/").status_code == 404
    member = Client()
    member.force_login(UserFactory())
    assert member.get("/console/sent-mail/").status_code == 404
    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    page = staff.get("/console/sent-mail/")
    assert page.status_code == 200
    assert f'<a href="{LINK}">' in page.content.decode()


def test_open_to_anyone_locally_with_links_clickable_and_filtered_by_address(settings) -> None:
    settings.TIDINGS_SENT_MAIL_PUBLIC = True
    sent_verification("ada@example.com")
    account_mail_send(kind="verify_email", to="grace@example.com", context={"link": LINK + "g"})
    page = Client().get("/console/sent-mail/").content.decode()
    assert page.count('data-testid="sent-mail"') == 2
    assert "Verify your email address for Tidings" in page
    assert f'<a href="{LINK}">' in page
    assert "Not sent yet" in page  # grace's is still queued: no content to show yet
    only_ada = Client().get("/console/sent-mail/", {"to": "ADA@example.com"}).content.decode()
    assert only_ada.count('data-testid="sent-mail"') == 1


def test_invite_and_role_changed_are_ready_for_other_apps_to_send() -> None:
    account_mail_send(
        kind="invite",
        to="new@example.com",
        context={"inviter": "Ada", "organization": "Lovelace Labs", "role": "Editor", "link": LINK},
    )
    account_mail_send(
        kind="role_changed",
        to="new@example.com",
        context={"organization": "Lovelace Labs", "role": "Admin", "link": LINK},
    )
    kinds = list(Delivery.objects.filter(destination="new@example.com").values_list("origin_id", flat=True))
    assert sorted(kinds) == ["invite", "role_changed"]


def test_platform_staff_open_the_account_templates_in_the_template_editor() -> None:
    staff = UserFactory(is_staff=True)
    client = Client()
    client.force_login(staff)
    response = client.post("/console/sent-mail/templates/")
    assert response.status_code == 302 and response["Location"] == "/console/delivery/templates/"
    editor = client.get("/console/delivery/templates/").content.decode()
    assert "account-verify-email" in editor
    member = Client()
    member.force_login(UserFactory())
    assert member.post("/console/sent-mail/templates/").status_code == 404
    assert not Membership.objects.filter(user__is_staff=False, organization__slug="tidings-platform").exists()
