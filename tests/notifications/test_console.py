"""Console pages: explorer, delivery page, dead letters, template and layout editors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from apps.delivery.models import Delivery, Layout, Template
from apps.notifications.router import outbox_relay
from apps.notifications.services import notification_publish
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(project: Any) -> Client:
    user = MembershipFactory(organization=project.organization, role="owner").user
    client = Client()
    # Through the sign-in page: the sign-in lock's backend needs the request.
    response = client.post("/console/login/", {"login": user.email, "password": "correct-horse-battery"})
    assert response.status_code == 302
    return client


def test_layout_editor_refuses_active_content_naming_what_it_found(console: Client, project: Any) -> None:
    html = '<html><body onload="x()"><script>steal()</script>{{ content }}<a href="javascript:go()">x</a></body></html>'
    response = console.post("/console/delivery/layouts/new/", {"name": "shell", "html": html})

    assert response.status_code == 400
    text = response.content.decode()
    assert "&lt;script&gt; element" in text
    assert "inline event handler onload=" in text
    assert "javascript: URL in href=" in text
    assert Layout.objects.count() == 0


def test_layout_editor_saves_a_clean_layout(console: Client, project: Any) -> None:
    response = console.post("/console/delivery/layouts/new/", {"name": "shell", "html": "<div>{{ content }}</div>"})
    assert response.status_code == 302
    assert Layout.objects.get().name == "shell"


def test_template_editor_creates_publishes_and_previews(console: Client, project: Any) -> None:
    response = console.post("/console/delivery/templates/", {"key": "promo", "name": "Promo", "channel": "email"})
    assert response.status_code == 302
    template = Template.objects.get(key="promo")
    content = {"email": {"subject": "Hi {{ name }}", "text": "x", "html": "<b>{{ name }}</b>"}}
    url = f"/console/delivery/templates/{template.pk}/"
    assert console.post(url, {"content": json.dumps(content)}).status_code == 302
    version = template.versions.get()
    assert version.published_at is None
    console.post(f"{url}versions/1/publish/")
    version.refresh_from_db()
    assert version.published_at is not None

    preview = console.post(f"{url}preview/", {"content": json.dumps(content), "data": '{"name": "<Ada>"}'})
    assert preview.status_code == 200
    rendered = preview.json()["rendered"]
    assert rendered["subject"] == "Hi <Ada>"
    assert rendered["html"] == "<b>&lt;Ada&gt;</b>"

    strict = console.post(f"{url}preview/", {"content": json.dumps(content), "data": "{}", "strict": "on"})
    assert strict.status_code == 422
    assert "'name'" in strict.json()["error"]


def test_template_editor_shows_bad_content_as_a_form_error(console: Client, project: Any, welcome: Any) -> None:
    response = console.post(
        f"/console/delivery/templates/{welcome.template_id}/", {"content": '{"email": {"subject": "{{ oops"}}'}
    )
    assert response.status_code == 400
    assert welcome.template.versions.count() == 1


def test_explorer_filters_and_delivery_page_shows_the_message(
    console: Client, project: Any, welcome: Any, ada: Any
) -> None:
    notification = notification_publish(
        project=project, template="welcome", to=["ada"], channels=["email"], data={"name": "Ada"}
    )
    notification_publish(project=project, template="welcome", to=[{"email": "x@example.com"}], channels=["email"])
    outbox_relay(project=project)

    page = console.get("/console/notifications/", {"subscriber": "ada"}).content.decode()
    assert f'data-notification-id="{notification.pk}"' in page
    assert page.count("data-notification-id=") == 1
    assert (
        console.get("/console/notifications/", {"state": "failed"}).content.decode().count("data-notification-id=") == 0
    )
    assert (
        console.get("/console/notifications/", {"state": "queued", "channel": "email"})
        .content.decode()
        .count("data-notification-id=")
        == 2
    )

    delivery = Delivery.objects.get(destination="ada@example.com")
    detail = console.get(f"/console/delivery/deliveries/{delivery.pk}/").content.decode()
    assert "Hello Ada" in detail
    assert "welcome@1" in detail
    timeline = console.get("/console/delivery/subscribers/ada/messages/").content.decode()
    assert f'data-delivery-id="{delivery.pk}"' in timeline


def test_another_projects_delivery_page_is_404(console: Client, other_project: Any, welcome: Any) -> None:
    from tests.notifications.conftest import make_template

    make_template(other_project)
    notification_publish(project=other_project, template="welcome", to=[{"email": "x@example.com"}], channels=["email"])
    outbox_relay(project=other_project)
    delivery = Delivery.objects.get()
    assert console.get(f"/console/delivery/deliveries/{delivery.pk}/").status_code == 404


def test_dead_letter_page_replays_selected(console: Client, project: Any, welcome: Any, ada: Any) -> None:
    notification_publish(project=project, template="welcome", to=["ada"], channels=["email", "sms"])
    outbox_relay(project=project)
    Delivery.objects.update(state="failed", last_error="permanent: invalid address")
    dead = Delivery.objects.first()

    page = console.get("/console/delivery/dead-letters/").content.decode()
    assert "permanent: invalid address" in page
    response = console.post("/console/delivery/dead-letters/replay/", {"ids": [dead.pk]})
    assert response.status_code == 302
    assert Delivery.objects.get(pk=dead.pk).state == "queued"
    assert Delivery.objects.filter(state="failed").count() == 1


def test_subscriber_page_timeline_lists_their_messages(console: Client, project: Any, welcome: Any, ada: Any) -> None:
    notification_publish(project=project, template="welcome", to=["ada"], channels=["email", "sms"])
    outbox_relay(project=project)
    page = console.get(f"/console/subscribers/{ada.pk}/").content.decode()
    for delivery in Delivery.objects.all():
        assert f'data-delivery-id="{delivery.pk}"' in page
    assert "welcome@1" in page


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("{{ range(10**9) }}", "template_range_too_big"),
        ("{{ 'a' * 10**7 }}", "template_too_large"),
        ("{% for i in range(1000) %}{{ 'a' * 1000 }}{% endfor %}{{ 'b' * 1000 }}", "template_output_too_large"),
        ("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}", "template_too_slow"),
        ("{{ 'x'|center(10**9) }}", "template_too_large"),
        ("{{ 1 / 0 }}", "template_render_failed"),
    ],
)
def test_template_preview_stops_a_runaway_template_with_a_clear_error(
    console: Client, project: Any, welcome: Any, settings: Any, source: str, code: str
) -> None:
    settings.TIDINGS_RENDER_TIME_LIMIT_MS = 300
    content = {"sms": {"text": source}}
    response = console.post(
        f"/console/delivery/templates/{welcome.template_id}/preview/", {"content": json.dumps(content), "data": "{}"}
    )
    assert response.status_code == 422
    assert response.json()["code"] == code
    assert len(response.content) < 2000


# Templates whose text or data trips Jinja, a filter or Python itself in ways that are
# no resource limit: each must come back as the editor's inline error, never a 500.
HOSTILE_TEMPLATES = [
    ("{% for k, v in data.usage|dictsort %}{{ k }}{% endfor %}", {"usage": [1, 2]}, "AttributeError"),
    ("{{ data.usage|xmlattr }}", {"usage": [1, 2]}, "AttributeError"),
    ("{{ data.a + data.b }}", {"a": 1, "b": "x"}, "TypeError"),
    ("{{ data.plan.pop('seats') }}", {"plan": {"name": "gold"}}, "KeyError"),
    ("{{ (data.n|float) ** 400 }}", {"n": "1e10"}, "OverflowError"),
    ("{{ data.name|truncate(-5) }}", {"name": "Ada Lovelace"}, "AssertionError"),
    ("{{ cycler().next() }}", {}, "RuntimeError"),
    ("{% macro again() %}{{ again() }}{% endmacro %}{{ again() }}", {}, "template_too_deep"),
    ("{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}", {}, "template_too_deep"),
    ("{{ " + "9" * 5000 + " }}", {}, "ValueError"),
]


@pytest.mark.parametrize(("source", "data", "named"), HOSTILE_TEMPLATES)
def test_template_preview_answers_a_template_that_fails_to_render_with_the_reason(
    console: Client, welcome: Any, source: str, data: dict, named: str
) -> None:
    content = {"sms": {"text": source}}
    response = console.post(
        f"/console/delivery/templates/{welcome.template_id}/preview/",
        {"content": json.dumps(content), "data": json.dumps(data)},
    )
    assert response.status_code == 422
    body = response.json()
    assert body["code"].startswith("template_")
    assert named in body["error"] or named == body["code"]
    assert len(response.content) < 2000


@pytest.mark.parametrize(
    ("block", "named"),
    [
        ({"whatsapp": {"language": "en"}}, "whatsapp.template"),
        ({"whatsapp": {"template": "order_ready", "variables": "Ann"}}, "whatsapp.variables"),
        ({"email": {"text": "Hi"}}, "email.subject"),
        ({"email": {"subject": "Hi"}}, "email.text"),
        ({"sms": {"text": ""}}, "sms.text"),
        ({"push": {}}, "push.title"),
        ({"slack": {}}, "slack.text"),
        ({"teams": {"card": "x"}}, "teams.card"),
    ],
)
def test_template_editor_requires_what_the_channel_needs(
    console: Client, project: Any, welcome: Any, block: dict, named: str
) -> None:
    response = console.post(
        f"/console/delivery/templates/{welcome.template_id}/", {"content": json.dumps(block), "publish": "on"}
    )
    assert response.status_code == 400
    assert named in response.content.decode()
    assert welcome.template.versions.count() == 1


def test_template_editor_publishes_a_complete_whatsapp_block(console: Client, project: Any, welcome: Any) -> None:
    block = {"whatsapp": {"template": "order_ready", "language": "en", "variables": ["{{ name }}"]}}
    response = console.post(
        f"/console/delivery/templates/{welcome.template_id}/", {"content": json.dumps(block), "publish": "on"}
    )
    assert response.status_code == 302
    assert welcome.template.versions.order_by("-number").first().content == block


def test_template_editor_refuses_html_with_active_content(console: Client, project: Any, welcome: Any) -> None:
    block = {"email": {"subject": "Hi", "html": "<p>Hi</p><img src=x onerror=alert(1)>"}}
    response = console.post(f"/console/delivery/templates/{welcome.template_id}/", {"content": json.dumps(block)})
    assert response.status_code == 400
    assert "inline event handler onerror= on &lt;img&gt;" in response.content.decode()
    assert welcome.template.versions.count() == 1


def test_publishing_a_draft_that_lacks_what_its_channel_needs_is_refused_naming_the_field(
    console: Client, project: Any
) -> None:
    """A draft kept from before the channel rule (or written by hand) is checked again at publish."""
    from django.utils import timezone

    from apps.delivery.models import TemplateVersion

    template = Template.objects.create(project=project, key="order-ready", channel="whatsapp", name="Order ready")
    TemplateVersion.objects.create(
        project=project, template=template, number=1, content={"whatsapp": {"template": "order_ready"}}
    )
    draft = TemplateVersion.objects.create(
        project=project, template=template, number=2, content={"whatsapp": {"language": "en"}}
    )
    url = f"/console/delivery/templates/{template.pk}/"

    response = console.post(f"{url}versions/2/publish/", follow=True)

    assert response.status_code == 200
    page = response.content.decode()
    assert "whatsapp.template" in page and "Version 2 was not published" in page
    draft.refresh_from_db()
    assert draft.published_at is None
    assert not template.versions.filter(published_at__isnull=False).exists()

    TemplateVersion.objects.filter(pk=draft.pk).update(content={"whatsapp": {"template": "order_ready"}})
    console.post(f"{url}versions/2/publish/")
    draft.refresh_from_db()
    assert draft.published_at is not None and draft.published_at <= timezone.now()
