"""The console's template editor: per-channel fields, round trips, inline errors, live panes."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client

from apps.delivery.models import Layout, Template, TemplateVersion
from apps.delivery.services import template_create
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(project: Any) -> Client:
    user = MembershipFactory(organization=project.organization, role="owner").user
    client = Client()
    response = client.post("/console/login/", {"login": user.email, "password": "correct-horse-battery"})
    assert response.status_code == 302
    return client


class _FormValues(HTMLParser):
    """What a browser would submit from one form of a page, unchanged."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id, self.inside, self.values = form_id, False, []
        self.textarea: str | None = None
        self.select: str | None = None
        self.buffer = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.inside = a.get("id") == self.form_id
        if not self.inside:
            return
        if tag == "input" and a.get("name"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.values.append((a["name"], a.get("value") or ("on" if a.get("type") == "checkbox" else "")))
        elif tag == "textarea":
            self.textarea, self.buffer = a["name"], ""
        elif tag == "select":
            self.select = a["name"]
        elif tag == "option" and self.select and "selected" in a:
            self.values.append((self.select, a.get("value") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "textarea" and self.textarea:
            # The HTML parser drops the one newline that follows <textarea>, as browsers do.
            self.values.append((self.textarea, self.buffer.removeprefix("\n")))
            self.textarea = None
        elif tag == "select":
            self.select = None

    def handle_data(self, data: str) -> None:
        if self.textarea:
            self.buffer += data


def form_values(page: str, form_id: str = "version-form") -> dict[str, Any]:
    parser = _FormValues(form_id)
    parser.feed(page)
    values: dict[str, Any] = {}
    for name, value in parser.values:
        if name in values:
            values[name] = [*values[name], value] if isinstance(values[name], list) else [values[name], value]
        else:
            values[name] = value
    return values


def editor(project: Any, channel: str, content: dict[str, Any]) -> tuple[Template, str]:
    template = template_create(project=project, key=f"t-{channel}", channel=channel)
    TemplateVersion.objects.create(project=project, template=template, number=1, content=content)
    return template, f"/console/delivery/templates/{template.pk}/"


def fields_for(channel: str, **values: str) -> dict[str, Any]:
    return {"channels": [channel], **{f"{channel}_{k}": v for k, v in values.items()}}


ROUND_TRIPS = {
    "email": {
        "email": {
            "subject": "Hi {{ name }}",
            "preheader": "Your week, in short",
            "html": "<table>\n  <tr><td>Hi {{ name }} &amp; co</td></tr>\n</table>\n",
            "text": "  Hi {{ name }}\n\nBye\n",
            "from_email": "news@example.com",
            "headers": {"X-Campaign": "weekly"},
        }
    },
    "push": {
        "push": {
            "title": "Hi",
            "body": "Your order {{ order }} left",
            "image": "https://example.com/p.png",
            "data": {},
            "platform": "android",
        }
    },
    "sms": {"sms": {"text": "Code: {{ code }} \u2013 ça va"}},
    "whatsapp": {"whatsapp": {"template": "order_ready", "language": "pt_PT", "variables": ["{{ name }}", "42"]}},
    "slack": {
        "slack": {"text": "Deploy {{ v }}", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*x*"}}]}
    },
    "teams": {"teams": {"text": "Hi", "card": {"type": "AdaptiveCard", "version": "1.4", "body": []}}},
    "webhook": {"webhook": {"body": {"greeting": "Hi {{ name }}", "n": [1, 2]}}},
    "email and sms": {"email": {"subject": "S", "text": "T"}, "sms": {"text": "T"}},
}


@pytest.mark.parametrize("content", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_an_unchanged_draft_saves_the_content_it_was_opened_with(console: Client, project: Any, content: dict) -> None:
    template, url = editor(project, next(iter(content)), content)
    page = console.get(url).content.decode()
    values = form_values(page)
    for channel in content:
        assert f'value="{channel}" id="channel-{channel}" checked' in page

    response = console.post(url, values)

    assert response.status_code == 302, [line for line in response.content.decode().splitlines() if "error" in line]
    assert template.versions.order_by("-number").first().content == content


def test_the_fields_show_the_latest_versions_values(console: Client, project: Any) -> None:
    _, url = editor(project, "email", ROUND_TRIPS["email"])
    values = form_values(console.get(url).content.decode())
    assert values["email_subject"] == "Hi {{ name }}"
    assert values["email_preheader"] == "Your week, in short"
    assert values["email_html"].startswith("<table>\n  <tr><td>Hi {{ name }} &amp; co")
    assert values["email_text"] == "  Hi {{ name }}\n\nBye\n"


def test_edited_fields_build_the_content_the_engine_reads(console: Client, project: Any) -> None:
    template, url = editor(project, "push", ROUND_TRIPS["push"])
    values = form_values(console.get(url).content.decode())
    values.update(push_title="Shipped", push_image="", push_data='{"order": "{{ order }}"}')
    # Browsers send textarea line ends as CRLF; the stored text keeps LF.
    values["push_body"] = "Line one\r\nline two"

    assert console.post(url, values).status_code == 302

    assert template.versions.order_by("-number").first().content == {
        "push": {
            "title": "Shipped",
            "body": "Line one\nline two",
            "data": {"order": "{{ order }}"},
            "platform": "android",
        }
    }


@pytest.mark.parametrize(
    ("channel", "values", "field", "message"),
    [
        ("email", {"text": "Hi"}, "email_subject", "email.subject: an email needs a subject."),
        ("email", {"subject": "Hi"}, "email_text", "email.text: an email needs a text or an html body."),
        ("email", {"subject": "{{ oops", "text": "x"}, "email_subject", "email.subject: unexpected"),
        (
            "email",
            {"subject": "Hi", "html": "<p>Hi</p><img src=x onerror=alert(1)>"},
            "email_html",
            "inline event handler onerror= on &lt;img&gt;",
        ),
        ("push", {}, "push_title", "push.title: a push needs a title, a body or data."),
        ("push", {"title": "Hi", "data": '["a"]'}, "push_data", "Push data must be a JSON object"),
        ("push", {"title": "Hi", "data": "{oops"}, "push_data", "Not valid JSON"),
        ("sms", {"text": ""}, "sms_text", "sms.text: an SMS needs text."),
        (
            "whatsapp",
            {"language": "en"},
            "whatsapp_template",
            "whatsapp.template: WhatsApp needs the name of an approved template.",
        ),
        (
            "whatsapp",
            {"template": "order_ready"},
            "whatsapp_language",
            "whatsapp.language: WhatsApp needs the language of the approved template.",
        ),
        ("slack", {}, "slack_text", "slack.text: a Slack message needs text or blocks."),
        ("teams", {"card": '"x"'}, "teams_card", "teams.card: an Adaptive Card is a JSON object."),
    ],
)
def test_a_refused_version_shows_the_error_at_its_field_and_saves_nothing(
    console: Client, project: Any, channel: str, values: dict, field: str, message: str
) -> None:
    template = template_create(project=project, key="t", channel=channel)
    url = f"/console/delivery/templates/{template.pk}/"

    response = console.post(url, fields_for(channel, **values))

    assert response.status_code == 400
    page = response.content.decode()
    start = page.index(f'data-testid="error-{field}"')
    assert message in page[start : page.index("</p>", start)]
    assert page.index(f'name="{field}"') < start  # beside its field, after it
    assert f'aria-describedby="id_{field}-error"' in page and f'id="id_{field}-error"' in page
    assert not template.versions.exists()


def test_no_channel_ticked_is_refused(console: Client, project: Any) -> None:
    template = template_create(project=project, key="t", channel="email")
    response = console.post(f"/console/delivery/templates/{template.pk}/", {"channels": [], "email_subject": "Hi"})
    assert response.status_code == 400
    assert "Content needs one block per channel" in response.content.decode()
    assert not template.versions.exists()


def test_the_preview_pane_renders_the_fields_for_sample_data(console: Client, project: Any) -> None:
    template = template_create(project=project, key="t", channel="email")
    values = {
        **fields_for("email", subject="Hi {{ name }}", html='<p style="color:red">Hi {{ name }}</p>', text="x"),
        "preview_data": '{"name": "<Ada>"}',
    }

    pane = console.post(f"/console/delivery/templates/{template.pk}/preview/pane/", values).content.decode()

    assert '<pre class="preview-text">Hi &lt;Ada&gt;</pre>' in pane
    frame = pane[pane.index("<iframe") : pane.index("</iframe>")]
    assert 'sandbox=""' in frame
    assert 'srcdoc="&lt;p style=&quot;color:red&quot;&gt;Hi &amp;lt;Ada&amp;gt;&lt;/p&gt;"' in frame


def test_the_preview_pane_counts_sms_segments_and_shows_render_errors(console: Client, project: Any) -> None:
    template = template_create(project=project, key="t", channel="sms")
    url = f"/console/delivery/templates/{template.pk}/preview/pane/"

    pane = console.post(url, {**fields_for("sms", text="€" * 80), "preview_data": "{}"}).content.decode()
    assert "160 characters · GSM-7 · 1 segment<" in pane
    pane = console.post(url, {**fields_for("sms", text="ç" * 70 + "й"), "preview_data": "{}"}).content.decode()
    assert "71 characters · UCS-2 · 2 segments" in pane
    pane = console.post(url, {**fields_for("sms", text="{{ 1/0 }}"), "preview_data": "{}"}).content.decode()
    assert "ZeroDivisionError" in pane


def test_generate_text_from_html_fills_the_text_field(console: Client, project: Any) -> None:
    template = template_create(project=project, key="t", channel="email")
    html = '<style>p{}</style><h1>Hi {{ name }}</h1><p>Your <a href="https://x.test/o">order</a> left.<br>Bye</p>'

    response = console.post(f"/console/delivery/templates/{template.pk}/text-from-html/", {"email_html": html})

    assert response.status_code == 200
    assert json.loads(response["HX-Trigger-After-Swap"]) == {"text-generated": {}}
    assert 'name="email_text"' in response.content.decode()
    assert "Hi {{ name }}\n\nYour order (https://x.test/o) left.\nBye</textarea>" in response.content.decode()


def test_another_projects_template_panes_are_404(console: Client, other_project: Any) -> None:
    template = template_create(project=other_project, key="t", channel="email")
    for tail in ("preview/pane/", "text-from-html/"):
        assert console.post(f"/console/delivery/templates/{template.pk}/{tail}", {}).status_code == 404


def test_the_layout_editor_keeps_refusing_active_content_at_the_html_field(console: Client, project: Any) -> None:
    response = console.post(
        "/console/delivery/layouts/new/", {"name": "shell", "html": "<div>{{ content }}<iframe src=x></iframe></div>"}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "active content that email must not carry" in page[page.index('data-testid="error-html"') :]
    assert not Layout.objects.exists()


def test_the_layout_preview_places_a_sample_message_and_names_refusals(console: Client, project: Any) -> None:
    pane = console.post(
        "/console/delivery/layouts/preview/", {"html": '<div style="padding:8px">{{ content }}</div>'}
    ).content.decode()
    assert 'sandbox=""' in pane and "Sample message" in pane
    pane = console.post("/console/delivery/layouts/preview/", {"html": "<div onclick=x()>{{ content }}</div>"})
    assert "inline event handler onclick=" in pane.content.decode()
    assert "<iframe" not in pane.content.decode()
