"""Console access: the signed-in member, their current project, and their role in it."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.governance.models import Membership
from apps.governance.selectors import membership_for_project, projects_for_user
from apps.projects.models import Project

SESSION_PROJECT = "console_project_id"


def current_project(request: HttpRequest) -> tuple[Project | None, Membership | None]:
    projects = projects_for_user(request.user)
    project = None
    wanted = request.session.get(SESSION_PROJECT)
    if wanted is not None:
        project = projects.filter(pk=wanted).first()
    if project is None:
        project = projects.order_by("organization__name", "name").first()
    if project is None:
        return None, None
    request.session[SESSION_PROJECT] = project.pk
    return project, membership_for_project(request.user, project)


def console_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Sign-in required; sets ``request.project`` and ``request.membership``."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        project, membership = current_project(request)
        if project is None or membership is None:
            return render(request, "console/no_project.html", status=403)
        request.project = project  # type: ignore[attr-defined]
        request.membership = membership  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    return wrapper


def require_role(request: HttpRequest, allowed: frozenset[str]) -> None:
    membership: Membership = request.membership  # type: ignore[attr-defined]
    if membership.role not in allowed:
        raise PermissionDenied(f"Your role ({membership.role}) may not do this.")
