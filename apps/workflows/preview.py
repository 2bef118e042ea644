"""When would a subscriber resume from a wait node? The same ``resume_at`` the engine uses."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from apps.core.errors import ApplicationError, NotFound
from apps.core.time import is_valid_timezone
from apps.projects.models import Project
from apps.workflows.graph import Graph
from apps.workflows.models import WorkflowVersion
from apps.workflows.waits import WaitConfigError, localize, resume_at


def wait_preview(
    *,
    project: Project,
    version: WorkflowVersion,
    node_id: str,
    at: datetime,
    external_id: str | None = None,
    timezone_name: str | None = None,
) -> dict[str, Any]:
    graph = Graph.parse(version.graph)
    if node_id not in graph.nodes:
        raise NotFound(f"Version {version.number} has no node {node_id!r}.", field="node")
    if graph.node_type(node_id) != "wait":
        raise ApplicationError(f"Node {node_id!r} is not a wait node.", code="not_a_wait_node", field="node")
    return {
        "node": node_id,
        **wait_preview_config(
            project=project,
            config=graph.config(node_id),
            at=at,
            external_id=external_id,
            timezone_name=timezone_name,
        ),
    }


def wait_preview_config(
    *,
    project: Project,
    config: Mapping[str, Any],
    at: datetime,
    external_id: str | None = None,
    timezone_name: str | None = None,
) -> dict[str, Any]:
    """When a wait with ``config`` resumes for someone reaching it at ``at`` (a naive ``at``
    is a wall-clock time in the timezone the subscriber would be read in)."""
    if timezone_name and not is_valid_timezone(timezone_name):
        raise ApplicationError(
            f"{timezone_name!r} is not an IANA timezone (for example Europe/Lisbon).",
            code="invalid_timezone",
            field="timezone",
        )
    source, name = "none", ""
    if timezone_name:
        source, name = "given", timezone_name
    elif external_id:
        from apps.subscribers.selectors import subscriber_get

        subscriber = subscriber_get(project, external_id)
        if subscriber.timezone and is_valid_timezone(subscriber.timezone):
            source, name = "subscriber", subscriber.timezone
    if not name and project.timezone:
        source, name = "project", project.timezone
    zone = ZoneInfo(name) if name else None
    if at.tzinfo is None:
        at = localize(at, zone) if zone else at.replace(tzinfo=ZoneInfo("UTC"))
    try:
        resumes = resume_at(config, at, zone)
        resumes_local = resumes.astimezone(zone).isoformat() if zone else None
    except WaitConfigError as error:
        raise ApplicationError(str(error), code="timezone_required" if zone is None else "invalid_wait") from None
    except OverflowError:
        # Python's calendar ends with the year 9999.
        raise ApplicationError(
            f"A wait reached at {at.isoformat()} would resume after the year 9999.", code="out_of_range", field="at"
        ) from None
    return {
        "config": dict(config),
        "at": at,
        "timezone": name or None,
        "timezone_source": source,
        "resumes_at": resumes,
        "resumes_at_local": resumes_local,
    }
