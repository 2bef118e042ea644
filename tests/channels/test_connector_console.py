"""The connector console: per-provider forms validated by the adapter, write-only
secrets, send test through the real adapter, recent errors, tenancy and roles."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.delivery.models import Attempt, Connector, Delivery
from apps.delivery.services import connector_create
from tests.channels.cases import postmark
from tests.channels.fakes import fake_server
from tests.channels.helpers import email_case_responder
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

TOKEN = "pm-server-token-SECRET-9876"


@pytest.fixture
def owner_client(client, project):  # type: ignore[no-untyped-def]
    client.force_login(MembershipFactory(organization=project.organization, role="owner").user)
    return client


def postmark_form(api_url: str = "", **overrides: str) -> dict[str, str]:
    data = {"name": "Transactional", "server_token": TOKEN, "from_email": "news@tidings.test", "is_default": "on"}
    if api_url:
        data["api_url"] = api_url
    data.update(overrides)
    return data


def test_list_offers_a_form_for_every_provider(owner_client) -> None:  # type: ignore[no-untyped-def]
    response = owner_client.get("/console/connectors/")
    assert response.status_code == 200
    body = response.content.decode()
    for path in (
        "email/resend",
        "email/ses",
        "email/postmark",
        "email/sendgrid",
        "email/mailgun",
        "email/brevo",
        "email/smtp",
        "push/fcm",
        "sms/twilio",
        "whatsapp/cloudapi",
        "slack/slack",
        "teams/teams",
        "webhook/webhook",
    ):
        assert f"/console/connectors/new/{path}/" in body


def test_saving_without_required_credentials_shows_the_error_and_saves_nothing(owner_client, project) -> None:  # type: ignore[no-untyped-def]
    response = owner_client.post("/console/connectors/new/email/postmark/", postmark_form(server_token=""))
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()
    assert not Connector.objects.for_project(project).exists()


def test_adapter_validation_errors_land_on_the_field(owner_client, project, settings) -> None:  # type: ignore[no-untyped-def]
    settings.TIDINGS_WEBHOOK_ALLOW_PRIVATE = False
    response = owner_client.post(
        "/console/connectors/new/webhook/webhook/", {"secrets": "whsec_c2VjcmV0", "url": "http://10.0.0.7/hook"}
    )
    assert response.status_code == 400
    assert "private, loopback or link-local" in response.content.decode()
    smtp = owner_client.post(
        "/console/connectors/new/email/smtp/",
        {"host": "smtp.example.com", "port": "587", "domain": "tidings.test", "from_email": "ceo@elsewhere.test"},
    )
    assert smtp.status_code == 400
    assert "is not on the domain tidings.test" in smtp.content.decode()
    assert not Connector.objects.for_project(project).exists()


def test_saved_secret_is_never_rendered_again_only_its_last_characters(owner_client, project) -> None:  # type: ignore[no-untyped-def]
    response = owner_client.post("/console/connectors/new/email/postmark/", postmark_form())
    connector = Connector.objects.for_project(project).get()
    assert response.status_code == 302
    assert connector.credentials == {"server_token": TOKEN}
    assert TOKEN not in connector.credentials_encrypted
    for url in ("/console/connectors/", f"/console/connectors/{connector.pk}/"):
        page = owner_client.get(url).content.decode()
        assert TOKEN not in page
        assert "9876" in page
    assert (
        f"/webhooks/{connector.pk}/postmark"
        in owner_client.get(f"/console/connectors/{connector.pk}/").content.decode()
    )


def test_editing_with_a_blank_secret_keeps_the_stored_one(owner_client, project) -> None:  # type: ignore[no-untyped-def]
    owner_client.post("/console/connectors/new/email/postmark/", postmark_form())
    connector = Connector.objects.for_project(project).get()
    response = owner_client.post(
        f"/console/connectors/{connector.pk}/", postmark_form(server_token="", from_email="alerts@tidings.test")
    )
    assert response.status_code == 302
    connector.refresh_from_db()
    assert connector.credentials == {"server_token": TOKEN}
    assert connector.settings["from_email"] == "alerts@tidings.test"


def test_send_test_goes_through_the_real_adapter_and_reports_the_answer(owner_client, project) -> None:  # type: ignore[no-untyped-def]
    with fake_server(email_case_responder(postmark)) as server:
        owner_client.post("/console/connectors/new/email/postmark/", postmark_form(api_url=server.url))
        connector = Connector.objects.for_project(project).get()
        accepted = owner_client.post(
            f"/console/connectors/{connector.pk}/test/", {"destination": "ok-1@example.com"}, follow=True
        )
        refused = owner_client.post(
            f"/console/connectors/{connector.pk}/test/", {"destination": "perm-2@example.com"}, follow=True
        )
    assert "Test message accepted by postmark" in accepted.content.decode()
    assert "Test message permanent" in refused.content.decode()
    assert server.requests[0].json()["To"] == "ok-1@example.com"
    connector.refresh_from_db()
    assert connector.last_success_at is not None
    assert "recipient_refused" in connector.last_error


def test_recent_errors_list_the_connectors_failed_attempts(owner_client, project) -> None:  # type: ignore[no-untyped-def]
    connector = connector_create(
        project=project,
        channel="email",
        provider="postmark",
        credentials={"server_token": "t"},
        settings={"from_email": "a@tidings.test"},
    )
    delivery = Delivery.objects.create(
        project=project,
        channel="email",
        destination="a@example.com",
        origin_kind="test",
        origin_id="1",
        due_at=timezone.now(),
        delivery_key="k1",
        state="failed",
    )
    Attempt.objects.create(
        project=project,
        delivery=delivery,
        number=1,
        connector=connector,
        started_at=timezone.now(),
        outcome="permanent",
        provider_code="auth_failed",
        provider_message="Bad or missing Server API token.",
    )
    page = owner_client.get(f"/console/connectors/{connector.pk}/").content.decode()
    assert "auth_failed" in page and "Bad or missing Server API token." in page


def test_another_projects_connector_is_404(owner_client, other_project) -> None:  # type: ignore[no-untyped-def]
    theirs = connector_create(
        project=other_project,
        channel="sms",
        provider="twilio",
        credentials={"account_sid": "AC", "auth_token": "t"},
        settings={"from_number": "+1"},
    )
    assert owner_client.get(f"/console/connectors/{theirs.pk}/").status_code == 404
    assert owner_client.post(f"/console/connectors/{theirs.pk}/test/", {"destination": "+1555"}).status_code == 404


def test_members_may_look_but_not_add_connectors(client, project) -> None:  # type: ignore[no-untyped-def]
    client.force_login(MembershipFactory(organization=project.organization, role="editor").user)
    assert client.get("/console/connectors/").status_code == 200
    assert client.post("/console/connectors/new/email/postmark/", postmark_form()).status_code == 403
    assert not Connector.objects.for_project(project).exists()
