"""Connector console: list, add and edit per provider (validated by the adapter on
save), "send test" through the real adapter, and recent errors. Stored credentials are
never rendered again; only their last characters."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.console.access import console_page, require_role
from apps.core.errors import ApplicationError
from apps.delivery.models import Connector
from apps.delivery.services import connector_create
from apps.governance.models import KEY_MANAGER_ROLES

from .fields import BY_KEY, PROVIDERS, RECEIPT_PROVIDERS, ProviderForm
from .forms import ConnectorForm, SendTestForm
from .selectors import connector_get, connector_list, connector_recent_errors
from .services import connector_send_test, connector_update

# Connectors hold provider credentials: the same roles that manage API keys.
MANAGER_ROLES = KEY_MANAGER_ROLES


def _provider(channel: str, provider: str) -> ProviderForm:
    try:
        return BY_KEY[f"{channel}:{provider}"]
    except KeyError:
        raise Http404("No such provider.") from None


def _connector(request: HttpRequest, connector_id: int) -> Connector:
    try:
        return connector_get(request.project, connector_id)  # type: ignore[attr-defined]
    except Connector.DoesNotExist:
        raise Http404("No such connector in this project.") from None


def _webhook_url(request: HttpRequest, connector: Connector) -> str:
    if connector.provider not in RECEIPT_PROVIDERS:
        return ""
    return request.build_absolute_uri(reverse("delivery_webhooks:receipt", args=[connector.pk, connector.provider]))


def _apply_error(form: ConnectorForm, exc: ApplicationError) -> None:
    form.add_error(exc.field if exc.field in form.fields else None, exc.message)


@console_page
def connector_index(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "connectors/list.html",
        {
            "section": "connectors",
            "connectors": connector_list(request.project),  # type: ignore[attr-defined]
            "providers": PROVIDERS,
            "can_manage": request.membership.role in MANAGER_ROLES,  # type: ignore[attr-defined]
        },
    )


@console_page
def connector_new(request: HttpRequest, channel: str, provider: str) -> HttpResponse:
    require_role(request, MANAGER_ROLES)
    spec = _provider(channel, provider)
    project = request.project  # type: ignore[attr-defined]
    form = ConnectorForm(request.POST or None, provider=spec, project=project)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            credentials, settings = form.credentials_and_settings()
            try:
                connector = connector_create(
                    project=project,
                    channel=channel,
                    provider=provider,
                    credentials=credentials,
                    settings=settings,
                    name=form.cleaned_data["name"],
                    is_default=form.cleaned_data["is_default"],
                    secondary=form.cleaned_data["secondary"],
                )
            except ApplicationError as exc:
                _apply_error(form, exc)
            else:
                messages.success(request, f"Connector “{connector}” saved. Its secrets will not be shown again.")
                return redirect("connectors_console:detail", connector.pk)
        status = 400
    return render(
        request,
        "connectors/form.html",
        {"section": "connectors", "form": form, "provider": spec, "connector": None},
        status=status,
    )


@console_page
def connector_detail(request: HttpRequest, connector_id: int) -> HttpResponse:
    connector = _connector(request, connector_id)
    spec = _provider(connector.channel, connector.provider) if connector.provider != "dryrun" else None
    can_manage = request.membership.role in MANAGER_ROLES  # type: ignore[attr-defined]
    form = (
        ConnectorForm(request.POST or None, provider=spec, project=request.project, connector=connector)
        if spec
        else None
    )  # type: ignore[attr-defined]
    status = 200
    if request.method == "POST" and form is not None:
        require_role(request, MANAGER_ROLES)
        if form.is_valid():
            credentials, settings = form.credentials_and_settings()
            try:
                connector_update(
                    connector=connector,
                    name=form.cleaned_data["name"],
                    credentials=credentials,
                    settings=settings,
                    is_default=form.cleaned_data["is_default"],
                    secondary=form.cleaned_data["secondary"],
                )
            except ApplicationError as exc:
                _apply_error(form, exc)
            else:
                messages.success(request, f"Connector “{connector}” saved.")
                return redirect("connectors_console:detail", connector.pk)
        status = 400
    return render(
        request,
        "connectors/form.html",
        {
            "section": "connectors",
            "form": form,
            "provider": spec,
            "connector": connector,
            "can_manage": can_manage,
            "test_form": SendTestForm(),
            "webhook_url": _webhook_url(request, connector),
            "recent_errors": connector_recent_errors(request.project, connector),  # type: ignore[attr-defined]
        },
        status=status,
    )


@require_POST
@console_page
def connector_test(request: HttpRequest, connector_id: int) -> HttpResponse:
    require_role(request, MANAGER_ROLES)
    connector = _connector(request, connector_id)
    form = SendTestForm(request.POST)
    destination = form.cleaned_data["destination"] if form.is_valid() else ""
    result = connector_send_test(connector=connector, destination=destination)
    if result.outcome == "accepted":
        reference = f" (reference {result.provider_reference})" if result.provider_reference else ""
        messages.success(request, f"Test message accepted by {connector.provider}{reference}.")
    else:
        messages.error(request, f"Test message {result.outcome}: {result.code}: {result.message}")
    return redirect("connectors_console:detail", connector.pk)
