from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.console.navigation import NAVIGATION


def console_context(request: HttpRequest) -> dict[str, Any]:
    if not request.path.startswith("/console/"):
        return {}
    context: dict[str, Any] = {"console_nav": NAVIGATION}
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        from apps.governance.selectors import projects_for_user

        context["console_projects"] = list(projects_for_user(user).order_by("organization__name", "name"))
    context["current_project"] = getattr(request, "project", None)
    context["current_membership"] = getattr(request, "membership", None)
    return context
