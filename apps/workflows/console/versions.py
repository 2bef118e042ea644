"""A journey's versions in the console: compare any two, restore one into the draft."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError
from apps.workflows import selectors
from apps.workflows.builder.history import workflow_draft_restore
from apps.workflows.console.views import PUBLISHER_ROLES, _or_404
from apps.workflows.diff import workflow_version_diff
from apps.workflows.models import Workflow

DRAFT = "draft"


def _side(project: Any, workflow: Workflow, wanted: str) -> tuple[str, Any]:
    """A label and graph for one side of a comparison: a version number or the draft."""
    if wanted == DRAFT:
        return "the draft", workflow.draft_graph
    if not wanted.isdigit():
        raise Http404("Compare versions by number, or the draft.")
    version = _or_404(selectors.version_get, project, workflow, int(wanted))
    return f"version {version.number}", version.graph


@console_page
def version_compare(request: HttpRequest, key: str) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    workflow = _or_404(selectors.workflow_get, project, key)
    numbers = list(workflow.versions.order_by("-number").values_list("number", flat=True))
    default_new = str(numbers[0]) if numbers else DRAFT
    default_old = str(numbers[1]) if len(numbers) > 1 else default_new
    old = request.GET.get("from") or default_old
    new = request.GET.get("to") or default_new
    old_label, old_graph = _side(project, workflow, old)
    new_label, new_graph = _side(project, workflow, new)
    return render(
        request,
        "workflows/compare.html",
        {
            "section": "workflows",
            "workflow": workflow,
            "numbers": numbers,
            "old": old,
            "new": new,
            "old_label": old_label,
            "new_label": new_label,
            "diff": workflow_version_diff(old_graph, new_graph),
        },
    )


@console_page
@require_POST
def version_restore(request: HttpRequest, key: str, number: int) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    require_role(request, PUBLISHER_ROLES)
    workflow = _or_404(selectors.workflow_get, project, key)
    version = _or_404(selectors.version_get, project, workflow, number)
    # The revision the page showed: a draft changed since is not overwritten unseen.
    revision = request.POST.get("revision", "")
    try:
        saved = workflow_draft_restore(
            project=project,
            workflow=workflow,
            version=version,
            user=request.user,
            revision=int(revision) if revision.isdigit() else None,
        )
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        if saved.label:
            messages.success(request, f"Version {number} is the draft again; the builder can undo it.")
        else:
            messages.info(request, f"The draft already is version {number}.")
    return redirect("workflows_console:detail", key=key)
