"""Account email leaves through the platform project and the regular delivery path."""

from __future__ import annotations

import pytest

from apps.accounts.mail import ORIGIN_KIND, account_mail_send
from apps.accounts.platform import platform_project, platform_project_ensure
from apps.accounts.sent_mail import sent_account_mail
from apps.core.errors import ApplicationError
from apps.delivery.models import Attempt, Connector, Delivery, Template, TemplateVersion
from apps.delivery.services import template_version_create
from tests.delivery.conftest import redis_clear
from tests.fixtures.worker import wait_for


@pytest.mark.django_db
def test_platform_project_is_made_once_with_a_dry_run_connector_and_every_template() -> None:
    first = platform_project_ensure()
    again = platform_project_ensure()
    assert first.pk == again.pk
    assert first.organization.name == "Tidings platform"
    connector = Connector.objects.for_project(first).get(channel="email")
    assert (connector.provider, connector.is_default) == ("dryrun", True)
    keys = set(Template.objects.for_project(first).values_list("key", flat=True))
    assert keys == {
        "account-verify-email",
        "account-password-reset",
        "account-email-changed",
        "account-new-sign-in",
        "account-mfa-changed",
        "account-invite",
        "account-role-changed",
    }
    assert TemplateVersion.objects.for_project(first).filter(published_at__isnull=False).count() == 7


@pytest.mark.django_db
def test_a_provider_named_in_settings_takes_over_as_the_default_connector(settings) -> None:
    project = platform_project_ensure()
    settings.TIDINGS_ACCOUNT_MAIL_PROVIDER = "smtp"
    settings.TIDINGS_ACCOUNT_MAIL_CREDENTIALS = {}
    settings.TIDINGS_ACCOUNT_MAIL_SETTINGS = {"host": "127.0.0.1", "port": 2525, "domain": "tidings.test"}
    platform_project_ensure()
    default = Connector.objects.for_project(project).get(channel="email", is_default=True)
    assert default.provider == "smtp"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"kind": "welcome", "to": "a@example.com", "context": {}}, "unknown_account_mail_kind"),
        ({"kind": "verify_email", "to": "not-an-address", "context": {"link": "x"}}, "invalid_email"),
        ({"kind": "verify_email", "to": "a@example.com", "context": {}}, "missing_context"),
        ({"kind": "verify_email", "to": "a@example.com", "context": {"link": 5}}, "invalid_context"),
    ],
)
def test_bad_account_mail_is_refused_and_queues_nothing(kwargs, code) -> None:
    with pytest.raises(ApplicationError) as refused:
        account_mail_send(**kwargs)
    assert refused.value.code == code
    assert not Delivery.objects.filter(origin_kind=ORIGIN_KIND).exists()


@pytest.mark.worker
def test_account_mail_is_sent_by_the_worker_with_its_rendered_content_kept(celery_worker) -> None:
    redis_clear()
    project = platform_project_ensure()
    # Platform staff edit the template: the next send uses their latest published version.
    template = Template.objects.for_project(project).get(key="account-verify-email")
    template_version_create(
        template=template,
        content={"email": {"subject": "Please verify {{ email }}", "text": "Open {{ link }}", "html": "<p>x</p>"}},
        publish=True,
    )
    link = "http://testserver/console/account/confirm-email/abc/?next=a&b=c"
    account_mail_send(kind="verify_email", to="Ada@Example.com", context={"link": link})

    delivery = Delivery.objects.for_project(project).get(origin_kind=ORIGIN_KIND)
    assert (delivery.lane, delivery.origin_id, delivery.destination) == ("high", "verify_email", "Ada@Example.com")
    wait_for(lambda: Delivery.objects.get(pk=delivery.pk).state in {"sent", "delivered"}, message="not sent")
    assert Attempt.objects.filter(delivery_id=delivery.pk, outcome="accepted").count() == 1

    (mail,) = sent_account_mail(limit=10)
    assert mail.delivery.pk == delivery.pk
    assert mail.subject == "Please verify Ada@Example.com"
    assert link in mail.text
    assert mail.links == [link]
    assert platform_project() is not None
