"""Console pages of the delivery ledger: one delivery, dead letters, templates, layouts."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.console.access import console_page
from apps.core.errors import ApplicationError
from apps.core.ids import parse_id
from apps.delivery.console.forms import DeadLetterFilterForm
from apps.delivery.models import Attempt, Delivery, DeliveryEvent
from apps.delivery.rendering import TemplateError, render_context
from apps.delivery.rendering import render as render_version
from apps.delivery.selectors import subscriber_render_fields
from apps.notifications.dead_letters import dead_letter_search, dead_letters_replay


def _delivery(request: HttpRequest, delivery_id: int) -> Delivery:
    delivery = (
        Delivery.objects.for_project(request.project)  # type: ignore[attr-defined]
        .select_related("template_version__template", "template_version__layout", "subscriber")
        .filter(pk=delivery_id)
        .first()
    )
    if delivery is None:
        raise Http404("No such delivery in this project.")
    return delivery


def rendered_as_sent(delivery: Delivery) -> tuple[dict[str, Any] | None, str]:
    """The message as it went out, and where that view comes from."""
    if delivery.payload_snapshot:
        return delivery.payload_snapshot, "payload snapshot kept with the delivery"
    if delivery.content is not None:
        return delivery.content, "pre-rendered content sent through the API"
    version = delivery.template_version
    if version is None:
        return None, "no content"
    try:
        content = render_version(
            version,
            render_context(subscriber_render_fields(delivery.subscriber), delivery.context),
            channel=delivery.channel,
        )
    except TemplateError as exc:
        return None, f"rendering fails: {exc.message}"
    return content, f"rendered from {version.template.key}@{version.number} (immutable) and the stored context"


@console_page
def delivery_detail(request: HttpRequest, delivery_id: int) -> HttpResponse:
    delivery = _delivery(request, delivery_id)
    content, source = rendered_as_sent(delivery)
    return render(
        request,
        "delivery/delivery.html",
        {
            "section": "notifications",
            "delivery": delivery,
            "attempts": Attempt.objects.filter(delivery_id=delivery.pk).order_by("number"),
            "events": DeliveryEvent.objects.filter(delivery_id=delivery.pk).order_by("id"),
            "content": content,
            "content_source": source,
        },
    )


@console_page
def dead_letters(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    form = DeadLetterFilterForm(request.GET or None)
    filters = {k: v for k, v in form.cleaned_data.items() if v} if form.is_bound and form.is_valid() else {}
    letters = list(dead_letter_search(project, **filters)[:200])
    return render(
        request,
        "delivery/dead_letters.html",
        {"section": "dead_letters", "form": form, "letters": letters, "filters": filters},
    )


@require_POST
@console_page
def dead_letters_replay_view(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    try:
        if request.POST.get("scope") == "filter":
            form = DeadLetterFilterForm(request.POST)
            filters = {k: v for k, v in form.cleaned_data.items() if v} if form.is_valid() else {}
            replayed = dead_letters_replay(project=project, **filters)
        else:
            ids = [pk for i in request.POST.getlist("ids") if (pk := parse_id(i))]
            if not ids:
                messages.error(request, "Select at least one dead letter to replay.")
                return redirect("delivery_console:dead_letters")
            replayed = dead_letters_replay(project=project, ids=ids)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Replayed {len(replayed)} dead letter{'s' if len(replayed) != 1 else ''}.")
    return redirect("delivery_console:dead_letters")


@console_page
def subscriber_messages(request: HttpRequest, external_id: str) -> HttpResponse:
    from apps.delivery.api.views import subscriber_for_history
    from apps.delivery.console.timeline import subscriber_timeline

    project = request.project  # type: ignore[attr-defined]
    try:
        subscriber = subscriber_for_history(project, external_id)
    except ApplicationError as exc:
        raise Http404(exc.message) from exc
    context = {"section": "notifications", **subscriber_timeline(project, subscriber, limit=200)}
    return render(request, "delivery/subscriber_messages.html", context)
