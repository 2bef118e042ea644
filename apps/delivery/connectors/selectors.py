"""Reads for the connector console; the project always comes first."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.delivery.models import Attempt, Connector


def connector_list(project: object) -> QuerySet[Connector]:
    return Connector.objects.for_project(project).select_related("secondary").order_by("channel", "-is_default", "pk")


def connector_get(project: object, connector_id: int) -> Connector:
    """Raises Connector.DoesNotExist for another project's connector as for a missing one."""
    return Connector.objects.for_project(project).select_related("secondary").get(pk=connector_id)


def connector_recent_errors(project: object, connector: Connector, limit: int = 20) -> QuerySet[Attempt]:
    return (
        Attempt.objects.for_project(project)
        .filter(connector=connector, outcome__in=["retryable", "permanent"])
        .order_by("-started_at")[:limit]
    )
