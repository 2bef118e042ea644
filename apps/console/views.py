"""The console shell: the project switcher and the overview page (sign-in is allauth's)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.console.access import SESSION_PROJECT, console_page
from apps.core.ids import parse_id
from apps.governance.selectors import api_key_list, projects_for_user


@console_page
def home(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    keys = api_key_list(project)
    return render(
        request,
        "console/home.html",
        {"section": "overview", "active_keys": sum(1 for k in keys if k.is_active())},
    )


@require_POST
@console_page
def switch_project(request: HttpRequest) -> HttpResponse:
    wanted = request.POST.get("project")
    pk = parse_id(wanted)
    project = projects_for_user(request.user).filter(pk=pk).first() if pk else None
    if project is None:
        messages.error(request, "You are not a member of that project.")
    else:
        request.session[SESSION_PROJECT] = project.pk
        messages.success(request, f"Switched to {project.organization.name} / {project.name}.")
    target = request.POST.get("next") or "console:home"
    if not str(target).startswith("/console/"):
        target = "console:home"
    return redirect(target)
