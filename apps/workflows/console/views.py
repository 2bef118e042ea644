"""Journeys in the console: workflows, versions (drawn), executions, a subscriber's journey."""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError, NotFound
from apps.governance.models import Role
from apps.workflows import selectors, services
from apps.workflows.console.drawing import draw
from apps.workflows.console.runs import can_start_runs
from apps.workflows.graph import graph_issues
from apps.workflows.preview import wait_preview

# Members edit drafts; publishing, restoring a version and cancelling an execution change
# what subscribers get, so they are kept for admins and owners.
PUBLISHER_ROLES = frozenset({Role.OWNER, Role.ADMIN})


def can_publish(request: HttpRequest) -> bool:
    return request.membership.role in PUBLISHER_ROLES  # type: ignore[attr-defined]


def _or_404(call, *args):  # type: ignore[no-untyped-def]
    try:
        return call(*args)
    except NotFound as exc:
        raise Http404(exc.message) from exc


@console_page
def workflow_list(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    return render(
        request,
        "workflows/list.html",
        {"section": "workflows", "workflows": selectors.workflow_list(project)},
    )


@console_page
def workflow_detail(request: HttpRequest, key: str) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    workflow = _or_404(selectors.workflow_get, project, key)
    issues = graph_issues(workflow.draft_graph, project=project)
    return render(
        request,
        "workflows/detail.html",
        {
            "section": "workflows",
            "workflow": workflow,
            "versions": workflow.versions.select_related("published_by").order_by("-number"),
            "executions": selectors.execution_list(project, workflow).order_by("-created_at")[:50],
            "issues": issues,
            "draft": draw(workflow.draft_graph) if workflow.draft_graph.get("nodes") else None,
            "pending": selectors.draft_changes(project, workflow),
            "can_publish": can_publish(request),
            "can_start_runs": can_start_runs(request),
        },
    )


@console_page
@require_POST
def workflow_publish(request: HttpRequest, key: str) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    require_role(request, PUBLISHER_ROLES)
    workflow = _or_404(selectors.workflow_get, project, key)
    try:
        version = services.workflow_publish(
            project=project, workflow=workflow, published_by=request.user, published_via="console"
        )
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Published version {version.number}.")
    return redirect("workflows_console:detail", key=key)


@console_page
def version_detail(request: HttpRequest, key: str, number: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    workflow = _or_404(selectors.workflow_get, project, key)
    version = _or_404(selectors.version_get, project, workflow, number)
    waits = [n["id"] for n in version.graph.get("nodes", []) if n["type"] == "wait"]
    preview, preview_error = None, None
    if request.GET.get("node"):
        try:
            at = datetime.fromisoformat(request.GET["at"]) if request.GET.get("at") else timezone.now()
            if timezone.is_naive(at):
                at = at.replace(tzinfo=UTC)
            preview = wait_preview(
                project=project,
                version=version,
                node_id=request.GET["node"],
                at=at,
                external_id=request.GET.get("subscriber") or None,
                timezone_name=request.GET.get("timezone") or None,
            )
        except ValueError:
            preview_error = "Give the moment as YYYY-MM-DDTHH:MM (UTC)."
        except ApplicationError as exc:
            preview_error = exc.message
    return render(
        request,
        "workflows/version.html",
        {
            "section": "workflows",
            "workflow": workflow,
            "version": version,
            "drawing": draw(version.graph),
            "wait_nodes": waits,
            "preview": preview,
            "preview_error": preview_error,
        },
    )


@console_page
@require_POST
def execution_cancel(request: HttpRequest, execution_id: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    require_role(request, PUBLISHER_ROLES)
    execution = _or_404(selectors.execution_get, project, execution_id)
    try:
        services.execution_cancel(project=project, execution=execution)
        messages.success(request, f"Execution {execution.pk} cancelled.")
    except ApplicationError as exc:
        messages.error(request, exc.message)
    return redirect("workflows_console:execution", execution_id=execution.pk)


@console_page
def journey_detail(request: HttpRequest, journey_id: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    journey = _or_404(selectors.journey_get, project, journey_id)
    steps = selectors.journey_path(project, journey)
    sent = selectors.journey_messages(project, steps)
    return render(
        request,
        "workflows/journey.html",
        {
            "section": "workflows",
            "journey": journey,
            "steps": [(step, sent.get(step.pk, [])) for step in steps],
        },
    )
