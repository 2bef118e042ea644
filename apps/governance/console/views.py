"""API keys in the console: list, create (shown once), rotate and revoke; and the
project's identity-verification secret, shown to those who manage keys and rotated here."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError
from apps.governance.console.forms import ApiKeyCreateForm, ApiKeyRotateForm
from apps.governance.identity import identity_secret_reveal, identity_secret_rotate
from apps.governance.models import KEY_MANAGER_ROLES, ApiKey
from apps.governance.selectors import api_key_get, api_key_list
from apps.governance.services import api_key_create, api_key_revoke, api_key_rotate

SESSION_NEW_KEY = "console_new_api_key"


def _remember_new_key(request: HttpRequest, key: ApiKey, raw: str) -> None:
    # The raw key lives in the session only until the next page shows it once.
    request.session[SESSION_NEW_KEY] = {"id": key.pk, "raw": raw, "name": key.name}


@console_page
def key_list(request: HttpRequest) -> HttpResponse:
    project = request.project  # type: ignore[attr-defined]
    form = ApiKeyCreateForm()
    status = 200
    if request.method == "POST":
        require_role(request, KEY_MANAGER_ROLES)
        form = ApiKeyCreateForm(request.POST)
        if form.is_valid():
            try:
                key, raw = api_key_create(
                    project=project,
                    name=form.cleaned_data["name"],
                    kind=form.cleaned_data["kind"],
                    ceiling=form.cleaned_data.get("ceiling") or None,
                    scopes=form.cleaned_data.get("scopes") or None,
                    created_by=request.user,
                )
            except ApplicationError as exc:
                form.add_error(exc.field if exc.field in form.fields else None, exc.message)
            else:
                _remember_new_key(request, key, raw)
                messages.success(request, f"Key “{key.name}” created. Copy it now: it will not be shown again.")
                return redirect("governance_console:keys")
        status = 400
    new_key = request.session.pop(SESSION_NEW_KEY, None)
    can_manage = request.membership.can_manage_keys  # type: ignore[attr-defined]
    return render(
        request,
        "governance/keys.html",
        {
            "section": "keys",
            "keys": api_key_list(project),
            "form": form,
            "rotate_form": ApiKeyRotateForm(),
            "new_key": new_key,
            "can_manage": can_manage,
            "identity_secret": identity_secret_reveal(project=project) if can_manage else None,
        },
        status=status,
    )


def _project_key(request: HttpRequest, key_id: int) -> ApiKey:
    try:
        return api_key_get(request.project, key_id)  # type: ignore[attr-defined]
    except ApiKey.DoesNotExist as exc:
        raise Http404("No such key in this project.") from exc


@require_POST
@console_page
def key_revoke(request: HttpRequest, key_id: int) -> HttpResponse:
    require_role(request, KEY_MANAGER_ROLES)
    key = api_key_revoke(api_key=_project_key(request, key_id))
    messages.success(request, f"Key “{key.name}” ({key.masked}) is revoked.")
    return redirect("governance_console:keys")


@require_POST
@console_page
def key_rotate(request: HttpRequest, key_id: int) -> HttpResponse:
    require_role(request, KEY_MANAGER_ROLES)
    key = _project_key(request, key_id)
    form = ApiKeyRotateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose how long the old key should keep working.")
        return redirect("governance_console:keys")
    try:
        new, raw = api_key_rotate(api_key=key, grace=form.grace_period(), rotated_by=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("governance_console:keys")
    _remember_new_key(request, new, raw)
    messages.success(request, f"Key “{key.name}” rotated. Copy the new key now: it will not be shown again.")
    return redirect("governance_console:keys")


@require_POST
@console_page
def identity_secret_rotate_view(request: HttpRequest) -> HttpResponse:
    require_role(request, KEY_MANAGER_ROLES)
    identity_secret_rotate(project=request.project, rotated_by=request.user)  # type: ignore[attr-defined]
    messages.success(request, "Identity secret rotated: subscriber hashes made with the old one no longer work.")
    return redirect("governance_console:keys")
