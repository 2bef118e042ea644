"""Console: the template editor (versions, publish, live preview) and the layout editor."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.console.access import console_page
from apps.core.errors import ApplicationError
from apps.delivery.console.content_form import RawVersionForm, VersionForm
from apps.delivery.console.forms import LayoutForm, PreviewForm, TemplateCreateForm
from apps.delivery.models import Layout, Template, TemplateVersion
from apps.delivery.rendering import TemplateError, render_context
from apps.delivery.rendering import render as render_version
from apps.delivery.services import layout_save, template_create, template_version_create, template_version_publish
from apps.notifications.template_refs import template_cache_clear

SAMPLE_SUBSCRIBER = {
    "external_id": "sample-1",
    "email": "ada@example.com",
    "phone": "+351912345678",
    "timezone": "Europe/Lisbon",
    "locale": "en",
    "attributes": {"first_name": "Ada"},
}


def _form_error(form: Any, exc: ApplicationError) -> None:
    field = exc.field if exc.field in form.fields else None
    form.add_error(field, exc.message)


@console_page
def template_list(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    form = TemplateCreateForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                template = template_create(project=project, **form.cleaned_data)
            except ApplicationError as exc:
                _form_error(form, exc)
            else:
                messages.success(request, f"Template “{template.key}” created. Write its first version.")
                return redirect("delivery_console:template", template.pk)
        status = 400
    templates = Template.objects.for_project(project).order_by("key")
    return render(
        request,
        "delivery/templates.html",
        {"section": "templates", "templates": templates, "form": form},
        status=status,
    )


def _template(request: HttpRequest, template_id: int) -> Template:
    template = Template.objects.for_project(request.project).filter(pk=template_id).first()  # type: ignore[attr-defined]
    if template is None:
        raise Http404("No such template in this project.")
    return template


def _version_form(request: HttpRequest, project: Any, initial: dict[str, Any]) -> VersionForm | RawVersionForm:
    # A post of the whole content as JSON (scripts, older pages) is still understood.
    if request.method == "POST" and "content" in request.POST and "channels" not in request.POST:
        return RawVersionForm(request.POST, project=project)
    return VersionForm(request.POST or None, project=project, initial=initial)


@console_page
def template_detail(request: HttpRequest, template_id: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    template = _template(request, template_id)
    versions = list(template.versions.select_related("layout").order_by("-number"))
    latest = versions[0] if versions else None
    initial = VersionForm.initial_for(latest.content if latest else _starter(template.channel))
    if latest is not None:
        initial.update({"layout": latest.layout_id, "strict": latest.strict})
    form = _version_form(request, project, initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                version = template_version_create(
                    template=template,
                    content=form.stored_content(),
                    layout=form.cleaned_data.get("layout"),
                    strict=form.cleaned_data.get("strict", False),
                    publish=form.cleaned_data.get("publish", False),
                )
            except ApplicationError as exc:
                form.add_content_error(exc.field, exc.message)
            else:
                if version.published_at:
                    template_cache_clear()
                state = "published" if version.published_at else "saved as a draft"
                messages.success(request, f"Version {version.number} {state}.")
                return redirect("delivery_console:template", template.pk)
        status = 400
    return render(
        request,
        "delivery/template.html",
        {
            "section": "templates",
            "template": template,
            "versions": versions,
            "form": form,
            "sample_data": json.dumps({"name": "Ada"}, indent=2),
        },
        status=status,
    )


def _starter(channel: str) -> dict[str, Any]:
    starters = {
        "email": {"subject": "Hello {{ name }}", "text": "Hi {{ name }}", "html": "<p>Hi {{ name }}</p>"},
        "push": {"title": "Hello {{ name }}", "body": "Hi {{ name }}", "data": {}},
        "sms": {"text": "Hi {{ name }}"},
        "whatsapp": {"template": "hello", "language": "en", "variables": ["{{ name }}"]},
        "slack": {"text": "Hi {{ name }}"},
        "teams": {"text": "Hi {{ name }}"},
        "webhook": {"body": {"greeting": "Hi {{ name }}"}},
    }
    return {channel: starters.get(channel, {"text": "Hi {{ name }}"})}


@require_POST
@console_page
def template_version_publish_view(request: HttpRequest, template_id: int, number: int) -> HttpResponse:
    template = _template(request, template_id)
    version = template.versions.filter(number=number).first()
    if version is None:
        raise Http404("No such version.")
    try:
        template_version_publish(version=version)
    except ApplicationError as exc:
        messages.error(request, f"Version {number} was not published: {exc.message}")
        return redirect("delivery_console:template", template.pk)
    template_cache_clear()  # this process answers "key" with the new version at once
    messages.success(request, f"Version {number} published. “{template.key}” now sends it.")
    return redirect("delivery_console:template", template.pk)


@require_POST
@console_page
def template_preview(request: HttpRequest, template_id: int) -> HttpResponse:
    """Renders the editor's current (unsaved) content with sample data; JSON for the live pane."""
    project = request.project  # type: ignore[attr-defined]
    template = _template(request, template_id)
    form = PreviewForm(request.POST)
    if not form.is_valid():
        first = next(iter(form.errors.items()))
        return JsonResponse({"error": f"{first[0]}: {' '.join(first[1])}"}, status=422)
    content = form.cleaned_data["content"]
    channel = form.cleaned_data.get("channel") or template.channel
    if channel not in content:
        channel = next(iter(content), channel)
    layout = None
    if form.cleaned_data.get("layout"):
        layout = Layout.objects.for_project(project).filter(pk=form.cleaned_data["layout"]).first()
    draft = TemplateVersion(
        project=project, template=template, content=content, layout=layout, strict=form.cleaned_data.get("strict")
    )
    context = render_context(SAMPLE_SUBSCRIBER, form.cleaned_data.get("data") or {})
    try:
        rendered = render_version(draft, context, channel=channel)
    except TemplateError as exc:
        return JsonResponse({"error": exc.message, "code": exc.code}, status=422)
    return JsonResponse({"channel": channel, "rendered": rendered})


@console_page
def layout_list(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    return render(
        request,
        "delivery/layouts.html",
        {"section": "layouts", "layouts": Layout.objects.for_project(project).order_by("name")},
    )


@console_page
def layout_edit(request: HttpRequest, layout_id: int | None = None) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    layout = None
    if layout_id is not None:
        layout = Layout.objects.for_project(project).filter(pk=layout_id).first()
        if layout is None:
            raise Http404("No such layout in this project.")
    initial = {"name": layout.name, "html": layout.html} if layout else {"html": DEFAULT_LAYOUT}
    form = LayoutForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                saved = layout_save(project=project, layout=layout, **form.cleaned_data)
            except ApplicationError as exc:
                _form_error(form, exc)
            else:
                messages.success(request, f"Layout “{saved.name}” saved.")
                return redirect("delivery_console:layout", saved.pk)
        status = 400
    return render(
        request, "delivery/layout.html", {"section": "layouts", "layout": layout, "form": form}, status=status
    )


# An email is the body's content (html, head and body are dropped): the page background
# sits on an outer element.
DEFAULT_LAYOUT = """<div style="font-family: sans-serif; background: #f6f6f6; padding: 24px">
  <div style="max-width: 600px; margin: 0 auto; background: #fff; padding: 24px">
    {{ content }}
  </div>
</div>"""
