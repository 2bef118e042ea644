"""Console: the editors' live panes (htmx fragments), rendered for sample data.

Nothing here stores anything: the panes render what the editor holds right now, the way
the engine would, so an error shows while typing and not only on save.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from apps.console.access import console_page
from apps.core.errors import ApplicationError
from apps.delivery.console.content_form import CHANNEL_LABELS, VersionForm
from apps.delivery.console.editor_views import SAMPLE_SUBSCRIBER, _template
from apps.delivery.console.html_text import html_to_text
from apps.delivery.console.sms_segments import sms_count
from apps.delivery.models import TemplateVersion
from apps.delivery.rendering import TemplateError, layout_render, render_context
from apps.delivery.rendering import render as render_version
from apps.delivery.services.content import layout_html_validate

SAMPLE_BODY = "<h1>Sample message</h1><p>Each email's own HTML is placed here.</p>"


def _sample_data(request: HttpRequest) -> tuple[dict[str, Any], str | None]:
    raw = request.POST.get("preview_data") or "{}"
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"Sample data is not valid JSON: {exc.msg} (line {exc.lineno})."
    if not isinstance(data, dict):
        return {}, "Sample data must be a JSON object."
    return data, None


def _rendered_channel(draft: TemplateVersion, channel: str, context: dict[str, Any]) -> dict[str, Any]:
    section: dict[str, Any] = {"channel": channel, "label": CHANNEL_LABELS.get(channel, channel)}
    try:
        rendered = render_version(draft, context, channel=channel)
    except TemplateError as exc:
        section["error"] = exc.message
        return section
    section["html"] = rendered.pop("html", None) if channel == "email" else None
    section["fields"] = [
        (name, value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False))
        for name, value in rendered.items()
    ]
    if channel == "sms":
        section["sms"] = sms_count(str(rendered.get("text") or ""))
    return section


@require_POST
@console_page
def template_preview_pane(request: HttpRequest, template_id: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    template = _template(request, template_id)
    form = VersionForm(request.POST, project=project)
    data, data_error = _sample_data(request)
    sections: list[dict[str, Any]] = []
    errors = [data_error] if data_error else []
    form.is_valid()
    # The preview renders what it can: a missing language stops a save, not a look.
    blocking = {name: e for name, e in form.errors.items() if name != "whatsapp_language"}
    if not blocking:
        content = form.stored_content()
        draft = TemplateVersion(
            project=project,
            template=template,
            content=content,
            layout=form.cleaned_data.get("layout"),
            strict=bool(form.cleaned_data.get("strict")),
        )
        context = render_context(SAMPLE_SUBSCRIBER, data)
        sections = [_rendered_channel(draft, channel, context) for channel in content]
    else:
        for name, found in blocking.items():
            label = f"{form[name].label}: " if name in form.fields else ""
            errors.append(label + " ".join(found))
    return render(request, "delivery/_template_preview.html", {"sections": sections, "errors": errors})


@require_POST
@console_page
def template_text_from_html(request: HttpRequest, template_id: int) -> HttpResponse:
    """The email's text field, filled with a plain-text draft of its HTML."""
    project = request.project  # type: ignore[attr-defined]
    _template(request, template_id)
    form = VersionForm(initial={"email_text": html_to_text(request.POST.get("email_html", ""))}, project=project)
    response = HttpResponse(str(form["email_text"]))
    # The preview listens for this (after the swap, to read the new text): a swap is not an input event.
    return trigger_client_event(response, "text-generated", after="swap")


@require_POST
@console_page
def layout_preview(request: HttpRequest) -> HttpResponse:
    html = (request.POST.get("html") or "").replace("\r\n", "\n")
    errors: list[str] = []
    rendered = None
    try:
        layout_html_validate(html=html)
        rendered = layout_render(html, render_context(SAMPLE_SUBSCRIBER, {"name": "Ada"}), body=SAMPLE_BODY)
    except ApplicationError as exc:
        errors.append(exc.message)
    return render(request, "delivery/_layout_preview.html", {"html": rendered, "errors": errors})
