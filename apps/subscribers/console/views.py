"""Console pages: subscribers, their tags, segments with a live count, imports."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError
from apps.subscribers import selectors
from apps.subscribers.console.forms import ImportForm, SegmentForm, SubscriberFilterForm, TagsForm
from apps.subscribers.console.rules_builder import rules_action, rules_from_post, rules_tree
from apps.subscribers.models import ImportJob, Segment, Subscriber
from apps.subscribers.services import (
    import_create,
    segment_count_preview,
    segment_create,
    segment_delete,
    segment_update,
    subscriber_tags_change,
)

EDITOR_ROLES = frozenset({"owner", "admin", "editor"})
PAGE_SIZE = 50


def _subscriber(request: HttpRequest, subscriber_id: int) -> Subscriber:
    found = selectors.subscriber_list(request.project).filter(pk=subscriber_id).first()  # type: ignore[attr-defined]
    if found is None:
        raise Http404("No such subscriber in this project.")
    return found


@console_page
def subscriber_list(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    form = SubscriberFilterForm(request.GET or None)
    segments = list(selectors.segment_list(project))
    form.fields["segment"].widget.choices = [("", "Any segment")] + [(s.pk, s.name) for s in segments]
    filters = form.cleaned_data if form.is_valid() else {}
    qs = selectors.subscriber_list(
        project,
        tag=filters.get("tag") or None,
        segment_id=filters.get("segment"),
        search=filters.get("q") or None,
        after_id=filters.get("cursor"),
    )
    rows = list(qs[: PAGE_SIZE + 1])
    next_cursor = rows[PAGE_SIZE - 1].pk if len(rows) > PAGE_SIZE else None
    rows = rows[:PAGE_SIZE]
    tags = selectors.subscriber_tag_names(project, [r.pk for r in rows])
    params = request.GET.copy()
    params.pop("cursor", None)
    return render(
        request,
        "subscribers/list.html",
        {
            "section": "subscribers",
            "form": form,
            "rows": [(r, sorted(tags.get(r.pk, set()))) for r in rows],
            "next_query": f"{params.urlencode()}&cursor={next_cursor}" if next_cursor else None,
        },
    )


@console_page
def subscriber_detail(request: HttpRequest, subscriber_id: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    subscriber = _subscriber(request, subscriber_id)
    form = TagsForm()
    status = 200
    if request.method == "POST":
        require_role(request, EDITOR_ROLES)
        form = TagsForm(request.POST)
        if form.is_valid():
            try:
                subscriber_tags_change(
                    project=project,
                    subscriber=subscriber,
                    add=form.names(form.cleaned_data["add"]),
                    remove=form.names(form.cleaned_data["remove"]),
                    source="console",
                    source_ref=f"user:{request.user.pk}",
                )
            except ApplicationError as exc:
                form.add_error("add" if exc.field and "remove" not in exc.field else "remove", exc.message)
            else:
                messages.success(request, "Tags updated.")
                return redirect("subscribers_console:detail", subscriber_id=subscriber.pk)
        status = 400
    tags = sorted(selectors.subscriber_tag_names(project, [subscriber.pk]).get(subscriber.pk, set()))
    return render(
        request,
        "subscribers/detail.html",
        {
            "section": "subscribers",
            "subscriber": subscriber,
            "attributes": json.dumps(subscriber.attributes, indent=2, ensure_ascii=False),
            "tags": tags,
            "form": form,
            "devices": subscriber.devices.order_by("-active", "-last_seen_at"),
            "segments": selectors.subscriber_segments(project, subscriber),
            "preferences": subscriber.preferences.order_by("channel", "category"),
            "tag_events": subscriber.tag_events.order_by("-created_at", "-pk")[:20],
            "can_edit": request.membership.role in EDITOR_ROLES,  # type: ignore[attr-defined]
        },
        status=status,
    )


@console_page
def segment_list(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    counts = selectors.segment_counts(project)
    segments = [(s, counts.get(s.pk, 0)) for s in selectors.segment_list(project)]
    return render(request, "subscribers/segments.html", {"section": "segments", "segments": segments})


@console_page
def segment_edit(request: HttpRequest, segment_id: int | None = None) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    segment = None
    if segment_id is not None:
        segment = Segment.objects.for_project(project).filter(pk=segment_id).first()
        if segment is None:
            raise Http404("No such segment in this project.")
    form = SegmentForm(initial={"name": segment.name} if segment else None)
    rules: Any = segment.rules if segment else DEFAULT_RULES
    rules_error = ""
    status = 200
    if request.method == "POST":
        require_role(request, EDITOR_ROLES)
        form = SegmentForm(request.POST)
        rules = rules_from_post(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            rules = data["rules"] if data["rules"] is not None else rules
            try:
                if segment is None:
                    segment = segment_create(project=project, name=data["name"], rules=rules)
                else:
                    segment_update(project=project, segment=segment, name=data["name"], rules=rules)
            except ApplicationError as exc:
                if exc.field == "name":
                    form.add_error("name", exc.message)
                else:
                    rules_error = f"{exc.message} ({exc.field})"
            else:
                messages.success(request, f"Segment “{segment.name}” saved.")
                return redirect("subscribers_console:segments")
        status = 400
    count = selectors.segment_counts(project).get(segment.pk, 0) if segment else None
    return render(
        request,
        "subscribers/segment_edit.html",
        {
            "section": "segments",
            "segment": segment,
            "form": form,
            "count": count,
            "tree": rules_tree(rules),
            "rules_error": rules_error,
            "tags": _tag_names(project),
            "can_edit": request.membership.role in EDITOR_ROLES,  # type: ignore[attr-defined]
        },
        status=status,
    )


DEFAULT_RULES = {"op": "and", "groups": [{"all": []}]}


def _tag_names(project: Any) -> list[str]:
    from apps.subscribers.models import Tag

    return list(Tag.objects.for_project(project).order_by("name").values_list("name", flat=True)[:1000])


@require_POST
@console_page
def segment_rules(request: HttpRequest) -> HttpResponse:
    """Redraw the rule builder with a rule or group added or removed; nothing is saved."""
    require_role(request, EDITOR_ROLES)
    rules = rules_action(rules_from_post(request.POST), str(request.POST.get("_rules", "")))
    context = {"tree": rules_tree(rules), "tags": _tag_names(request.project), "can_edit": True}  # type: ignore[attr-defined]
    context.update(_count(request.project, rules))  # type: ignore[attr-defined]
    return render(request, "subscribers/_rules_builder.html", context)


def _count(project: Any, rules: Any) -> dict[str, Any]:
    try:
        return {"preview_count": segment_count_preview(project=project, rules=rules)}
    except ApplicationError as exc:
        return {"preview_error": f"{exc.message}{f' ({exc.field})' if exc.field else ''}"}


@require_POST
@console_page
def segment_remove(request: HttpRequest, segment_id: int) -> HttpResponse:
    require_role(request, EDITOR_ROLES)
    project = request.project  # type: ignore[attr-defined]
    segment = Segment.objects.for_project(project).filter(pk=segment_id).first()
    if segment is None:
        raise Http404("No such segment in this project.")
    segment_delete(project=project, segment=segment)
    messages.success(request, f"Segment “{segment.name}” deleted.")
    return redirect("subscribers_console:segments")


@require_POST
@console_page
def segment_preview(request: HttpRequest) -> HttpResponse:
    """Live count for the editor: how many subscribers the typed rules match now. The rule
    builder posts its rows and gets the count line; a JSON body gets JSON."""
    if not request.content_type.startswith("application/json"):
        context = _count(request.project, rules_from_post(request.POST))  # type: ignore[attr-defined]
        return render(
            request, "subscribers/_segment_count.html", context, status=422 if "preview_error" in context else 200
        )
    try:
        rules = json.loads(request.body or b"null")
        count = segment_count_preview(project=request.project, rules=rules)  # type: ignore[attr-defined]
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            return JsonResponse({"error": f"Not valid JSON: {exc}."}, status=422)
        raise
    except ApplicationError as exc:
        return JsonResponse({"error": exc.message, "field": exc.field, "code": exc.code}, status=422)
    return JsonResponse({"count": count})


@console_page
def import_list(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    form = ImportForm()
    status = 200
    if request.method == "POST":
        require_role(request, EDITOR_ROLES)
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                job = import_create(
                    project=project, stream=upload, file_name=upload.name, content_type=upload.content_type or ""
                )
            except ApplicationError as exc:
                form.add_error("file", exc.message)
            else:
                return redirect("subscribers_console:import_detail", job_id=job.pk)
        status = 400
    jobs = ImportJob.objects.for_project(project).order_by("-pk")[:20]
    return render(
        request, "subscribers/imports.html", {"section": "imports", "form": form, "jobs": jobs}, status=status
    )


def _job(request: HttpRequest, job_id: int) -> ImportJob:
    job = ImportJob.objects.for_project(request.project).filter(pk=job_id).first()  # type: ignore[attr-defined]
    if job is None:
        raise Http404("No such import in this project.")
    return job


@console_page
def import_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    return render(request, "subscribers/import_detail.html", {"section": "imports", "job": _job(request, job_id)})


@console_page
def import_status(request: HttpRequest, job_id: int) -> JsonResponse:
    job = _job(request, job_id)
    total = job.rows_total or 0
    percent = min(100, round(100 * job.rows_done / total)) if total else 0
    return JsonResponse(
        {
            "status": job.status,
            "rows_total": job.rows_total,
            "rows_done": job.rows_done,
            "rows_imported": job.rows_imported,
            "rows_failed": job.rows_failed,
            "percent": 100 if job.status == ImportJob.Status.SUCCEEDED else percent,
            "error": job.error,
            "errors": sorted(job.errors, key=lambda e: e["line"])[:50],
        }
    )
