"""Starting a run of a published journey from the console: pick an audience, confirm the count, start.

The start goes through ``services.execution_start_once``, the API's start service plus a
one-time token from the confirm page, so a double submit starts one execution.
"""

from __future__ import annotations

import secrets

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError, NotFound
from apps.governance.models import Role
from apps.subscribers.models import Segment, Tag
from apps.workflows import selectors, services
from apps.workflows.audience import audience_resolve, audience_size
from apps.workflows.console.run_forms import RunAudienceForm, RunStartForm
from apps.workflows.models import Workflow

# Starting a run messages real people, so it is kept to the roles that run the project.
RUN_STARTER_ROLES = frozenset({Role.OWNER, Role.ADMIN})


def can_start_runs(request: HttpRequest) -> bool:
    return request.membership.role in RUN_STARTER_ROLES  # type: ignore[attr-defined]


def _workflow(request: HttpRequest, key: str) -> Workflow:
    try:
        return selectors.workflow_get(request.project, key)  # type: ignore[attr-defined]
    except NotFound as exc:
        raise Http404(exc.message) from exc


def _pickers(request: HttpRequest) -> dict[str, object]:
    project = request.project  # type: ignore[attr-defined]
    return {
        "segments": Segment.objects.for_project(project).order_by("name"),
        "tags": Tag.objects.for_project(project).order_by("name"),
    }


@console_page
def run_new(request: HttpRequest, key: str) -> HttpResponse:
    """GET: the audience pickers. POST: the confirm step, with the count and a one-time token."""
    require_role(request, RUN_STARTER_ROLES)
    project = request.project  # type: ignore[attr-defined]
    workflow = _workflow(request, key)
    version = workflow.versions.order_by("-number").first()
    if version is None:
        messages.error(request, f"Publish {workflow.name} before starting a run.")
        return redirect("workflows_console:detail", key=key)
    form = RunAudienceForm(request.POST or None)
    context = {"section": "workflows", "workflow": workflow, "version": version, "form": form}
    if request.method != "POST" or not form.is_valid():
        status = 422 if form.is_bound else 200
        return render(request, "workflows/run_new.html", {**context, **_pickers(request)}, status=status)
    try:
        resolved, unknown = audience_resolve(project, form.audience())
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except ApplicationError as exc:
        form.add_error(None, exc.message)
        return render(request, "workflows/run_new.html", {**context, **_pickers(request)}, status=422)
    # Ids travel back joined by commas: a hidden input would not keep the pasted new lines.
    ids = ",".join(form.cleaned_data.get("id_list", []))
    confirm = RunStartForm(
        initial={
            **form.cleaned_data,
            "external_ids": ids,
            "version": version.number,
            "token": secrets.token_urlsafe(24),
        }
    )
    return render(
        request,
        "workflows/run_confirm.html",
        {
            **context,
            "confirm": confirm,
            "audience": resolved,
            "size": audience_size(project, resolved),
            "unknown": unknown,
            "segment": Segment.objects.for_project(project).filter(pk=resolved.get("segment_id")).first(),
        },
    )


@console_page
def run_start(request: HttpRequest, key: str) -> HttpResponse:
    if request.method != "POST":
        return redirect("workflows_console:run_new", key=key)
    require_role(request, RUN_STARTER_ROLES)
    project = request.project  # type: ignore[attr-defined]
    workflow = _workflow(request, key)
    form = RunStartForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The run was not started: pick the audience again.")
        return redirect("workflows_console:run_new", key=key)
    try:
        execution, started = services.execution_start_once(
            project=project,
            workflow=workflow,
            audience=form.audience(),
            token=form.cleaned_data["token"],
            # The version the confirm page showed, even if a newer one was published since.
            version_number=form.cleaned_data["version"],
            started_by=f"console {request.user.get_username()}",
        )
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("workflows_console:detail", key=key)
    if started:
        messages.success(request, f"Run #{execution.pk} started.")
    return redirect("workflows_console:execution", execution_id=execution.pk)
