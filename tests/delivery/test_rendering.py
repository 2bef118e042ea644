from __future__ import annotations

import pytest
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.delivery.models import Layout, Template, TemplateVersion
from apps.delivery.rendering import TemplateError, render, render_context
from apps.delivery.sanitiser import html_findings
from apps.delivery.services import layout_save, template_create, template_version_create

pytestmark = pytest.mark.django_db

CONTEXT = render_context(
    {"email": "ann@example.com", "attributes": {"first_name": "<Ann>"}}, {"order_id": "A&B", "items": [1, 2]}
)


def version(project, content, strict=False, layout=None):
    template = Template.objects.create(project=project, key=f"t{Template.objects.count()}", channel="email", name="t")
    return TemplateVersion.objects.create(
        project=project,
        template=template,
        number=1,
        content=content,
        strict=strict,
        layout=layout,
        published_at=timezone.now(),
    )


def test_html_is_autoescaped_but_subject_text_and_sms_are_not(project):
    v = version(
        project,
        {
            "email": {
                "subject": "Hi {{ subscriber.first_name }}",
                "text": "{{ order_id }}",
                "html": "<b>{{ order_id }}</b>",
            },
            "sms": {"text": "{{ subscriber.first_name }} {{ data.order_id }}"},
        },
    )
    email = render(v, CONTEXT, channel="email")
    assert email == {"subject": "Hi <Ann>", "text": "A&B", "html": "<b>A&amp;B</b>"}
    assert render(v, CONTEXT, channel="sms") == {"text": "<Ann> A&B"}


def test_missing_variable_renders_empty_unless_the_version_is_strict(project):
    lenient = version(project, {"sms": {"text": "Hi {{ subscriber.nickname }}{{ coupon.code }}!"}})
    assert render(lenient, CONTEXT) == {"text": "Hi !"}
    strict = version(project, {"sms": {"text": "Hi {{ coupon }}!"}}, strict=True)
    with pytest.raises(TemplateError) as err:
        render(strict, CONTEXT)
    assert err.value.code == "template_variable_missing" and err.value.field == "coupon"
    with pytest.raises(TemplateError) as err:
        render(lenient, CONTEXT, strict=True)
    assert "nickname" in err.value.message


def test_sandbox_never_exposes_python_internals(project):
    v = version(project, {"sms": {"text": "[{{ ''.__class__.__mro__ }}]"}})
    assert render(v, CONTEXT) == {"text": "[]"}
    call = version(project, {"sms": {"text": "{{ ''.__class__.__mro__[1].__subclasses__() }}"}})
    with pytest.raises(TemplateError):
        render(call, CONTEXT)


def test_layout_wraps_email_html_without_escaping_it_twice(project):
    layout = Layout.objects.create(project=project, name="shell", html="<div>{{ content }}</div>")
    v = version(project, {"email": {"subject": "s", "html": "<p>{{ order_id }}</p>"}}, layout=layout)
    assert render(v, CONTEXT)["html"] == "<div><p>A&amp;B</p></div>"


def test_a_preheader_opens_the_email_html_hidden_and_escaped(project):
    layout = Layout.objects.create(project=project, name="shell", html="<div>{{ content }}</div>")
    content = {"email": {"subject": "s", "preheader": "Order {{ order_id }} <now>", "html": "<p>Hi</p>"}}
    rendered = render(version(project, content, layout=layout), CONTEXT)
    assert rendered["html"] == (
        '<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">Order A&amp;B &lt;now&gt;</div>'
        "<div><p>Hi</p></div>"
    )
    assert html_findings(rendered["html"]) == []
    without = render(version(project, {"email": {"subject": "s", "preheader": "", "html": "<p>Hi</p>"}}), CONTEXT)
    assert without["html"] == "<p>Hi</p>"


def test_syntax_errors_are_refused_when_a_version_is_created(project):
    template = template_create(project=project, key="broken", channel="sms")
    with pytest.raises(ApplicationError) as err:
        template_version_create(template=template, content={"sms": {"text": "{{ unclosed"}})
    assert err.value.code == "template_syntax" and err.value.field == "sms.text"


@pytest.mark.parametrize(
    ("html", "finding"),
    [
        ("<script>alert(1)</script>{{ content }}", "<script> element"),
        ("<iframe src='x'></iframe>{{ content }}", "<iframe> element"),
        ("<img src=x OnError='steal()'>{{ content }}", "inline event handler onerror= on <img>"),
        ("<a href=' JaVaScRiPt:alert(1)'>x</a>{{ content }}", "javascript: URL in href= on <a>"),
        ("<a href='java\tscript:alert(1)'>x</a>{{ content }}", "javascript: URL in href= on <a>"),
    ],
)
def test_layout_with_active_content_is_refused_naming_what_was_found(project, html, finding):
    assert finding in html_findings(html)
    with pytest.raises(ApplicationError) as err:
        layout_save(project=project, name="bad", html=html)
    assert err.value.code == "unsafe_layout" and finding in err.value.message
    assert not Layout.objects.filter(project=project).exists()


def test_safe_layout_is_saved(project):
    layout = layout_save(project=project, name="ok", html="<a href='https://x.test'>x</a>{{ content }}")
    assert layout.pk and html_findings(layout.html) == []
