"""The current project's settings: its name and timezone (waits read it for subscribers without one)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError
from apps.core.time import is_valid_timezone
from apps.governance.models import Role
from apps.projects.services import project_update

SETTINGS_ROLES = frozenset({Role.OWNER, Role.ADMIN})


@console_page
def project_settings(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    editable = request.membership.role in SETTINGS_ROLES  # type: ignore[attr-defined]
    error = ""
    if request.method == "POST":
        require_role(request, SETTINGS_ROLES)
        name = str(request.POST.get("name", "")).strip()[:200]
        zone = str(request.POST.get("timezone", "")).strip()[:64]
        if not name:
            error = "A project needs a name."
        elif zone and not is_valid_timezone(zone):
            error = f"{zone!r} is not an IANA timezone (for example Europe/Lisbon)."
        else:
            try:
                project_update(project=project, name=name, timezone=zone)
            except ApplicationError as exc:
                error = exc.message
            else:
                messages.success(request, "Project settings saved.")
                return redirect("console:project_settings")
    return render(
        request,
        "console/project_settings.html",
        {"section": "project", "editable": editable, "error": error, "values": request.POST or None},
        status=400 if error else 200,
    )
