"""Connectors: a project's provider accounts, credentials encrypted, resolved at send time."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from apps.core.errors import ApplicationError, NotFound
from apps.core.registry import RegistryError
from apps.delivery.channels.base import ConfigError, ConnectorConfig, adapters
from apps.delivery.models import Connector
from apps.projects.models import Project


def connector_config(connector: Connector) -> ConnectorConfig:
    return ConnectorConfig(
        project_id=connector.project_id,
        channel=connector.channel,
        provider=connector.provider,
        credentials=connector.credentials,
        settings=connector.settings or {},
        connector_id=connector.pk,
    )


@transaction.atomic
def connector_create(
    *,
    project: Project,
    channel: str,
    provider: str,
    credentials: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    name: str = "",
    is_default: bool = False,
    secondary: Connector | None = None,
) -> Connector:
    credentials = credentials or {}
    settings = settings or {}
    try:
        adapter_cls = adapters.get(f"{channel}:{provider}")
    except RegistryError:
        raise ApplicationError(
            f"No {channel} adapter for provider {provider!r}.", code="unknown_provider", field="provider"
        ) from None
    try:
        adapter_cls.validate_config(credentials, settings)
    except ConfigError as exc:
        raise ApplicationError(str(exc), code="invalid_connector", field=exc.field or "credentials") from exc
    if secondary is not None and (secondary.project_id != project.pk or secondary.channel != channel):
        raise NotFound("Secondary connector not found.", code="connector_not_found", field="secondary")
    if is_default:
        Connector.objects.for_project(project).filter(channel=channel, is_default=True).update(is_default=False)
    elif not Connector.objects.for_project(project).filter(channel=channel).exists():
        is_default = True  # the first connector of a channel is its default
    connector = Connector(
        project=project,
        channel=channel,
        provider=provider,
        name=name,
        settings=settings,
        is_default=is_default,
        secondary=secondary,
    )
    connector.set_credentials(credentials)
    connector.save()
    return connector


def connector_resolve(project: Project | int, channel: str, connector_id: int | None = None) -> ConnectorConfig:
    """The connector a send on ``channel`` uses: the named one or the channel's default,
    switched to its secondary while it is marked failing."""
    project_id = project if isinstance(project, int) else project.pk
    queryset = Connector.objects.for_project(project_id).filter(channel=channel).select_related("secondary")
    connector = (
        queryset.filter(pk=connector_id).first()
        if connector_id is not None
        else queryset.filter(is_default=True).first()
    )
    if connector is None:
        if connector_id is not None:
            raise NotFound("Connector not found.", code="connector_not_found", field="connector")
        raise NotFound(f"No {channel} connector is configured for this project.", code="no_connector")
    if connector.status == Connector.Status.FAILING and connector.secondary is not None:
        connector = connector.secondary
    return connector_config(connector)
