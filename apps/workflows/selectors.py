"""Workflow reads. The project is always the first argument; another project's row is a 404."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet

from apps.core.errors import NotFound
from apps.projects.models import Project
from apps.workflows.diff import GraphDiff, workflow_version_diff
from apps.workflows.models import Execution, Journey, Step, Workflow, WorkflowVersion


def workflow_list(project: Project) -> QuerySet[Workflow]:
    return Workflow.objects.for_project(project).annotate(version_count=Count("versions")).order_by("name")


def workflow_get(project: Project, key: str) -> Workflow:
    workflow = Workflow.objects.for_project(project).filter(key=key).first()
    if workflow is None:
        raise NotFound(f"No workflow {key!r} in this project.")
    return workflow


def version_get(project: Project, workflow: Workflow, number: int) -> WorkflowVersion:
    version = WorkflowVersion.objects.for_project(project).filter(workflow=workflow, number=number).first()
    if version is None:
        raise NotFound(f"Workflow {workflow.key!r} has no version {number}.")
    return version


def version_latest(project: Project, workflow: Workflow) -> WorkflowVersion | None:
    return WorkflowVersion.objects.for_project(project).filter(workflow=workflow).order_by("-number").first()


def draft_changes(project: Project, workflow: Workflow) -> tuple[WorkflowVersion | None, GraphDiff]:
    """What publishing the draft now would change, against the last published version."""
    latest = version_latest(project, workflow)
    return latest, workflow_version_diff(latest.graph if latest else None, workflow.draft_graph)


def execution_get(project: Project, execution_id: int) -> Execution:
    execution = (
        Execution.objects.for_project(project).select_related("workflow", "version").filter(pk=execution_id).first()
    )
    if execution is None:
        raise NotFound(f"No execution {execution_id} in this project.")
    return execution


def execution_list(project: Project, workflow: Workflow | None = None) -> QuerySet[Execution]:
    qs = Execution.objects.for_project(project).select_related("workflow", "version")
    return qs.filter(workflow=workflow) if workflow else qs


STEP_BUCKETS = {
    "pending": "active",
    "running": "active",
    "waiting": "waiting",
    "done": "done",
    "failed": "failed",
    "cancelled": "cancelled",
}


def execution_node_counts(project: Project, execution: Execution) -> dict[str, dict[str, int]]:
    """Per node: steps active (pending or running), waiting, done, failed, cancelled."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(sorted(set(STEP_BUCKETS.values())), 0))
    if execution.project_id != project.pk:
        raise NotFound(f"No execution {execution.pk} in this project.")
    # Steps carry their execution's project, so the execution alone scopes them. Leaving
    # project_id out of the filter, and counting rows rather than ids, lets Postgres answer
    # from the (execution, node, state) index alone: about five times faster on a million
    # steps than reading every step row, and this runs on every poll of a live page.
    rows = Step.objects.filter(execution_id=execution.pk).values("node_id", "state").annotate(n=Count("*")).order_by()
    for row in rows:
        counts[row["node_id"]][STEP_BUCKETS[row["state"]]] += row["n"]
    # Every node of the version appears, untouched ones with zeros, in graph order.
    return {n["id"]: counts[n["id"]] for n in execution.version.graph.get("nodes", [])}


def execution_journey_counts(project: Project, execution: Execution) -> dict[str, int]:
    totals = dict.fromkeys(Journey.State.values, 0)
    rows = (
        Journey.objects.for_project(project)
        .filter(execution=execution)
        .values("state")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in rows:
        totals[row["state"]] = row["n"]
    return totals


def execution_summary(project: Project, execution: Execution) -> dict[str, Any]:
    journeys = execution_journey_counts(project, execution)
    return {
        "id": execution.pk,
        "workflow": execution.workflow.key,
        "version": execution.version.number,
        "state": execution.state,
        "audience": {k: v for k, v in execution.audience.items() if k != "subscriber_ids"},
        "entered": execution.entered,
        "skipped": execution.skipped,
        "unknown_external_ids": execution.unknown_external_ids,
        "totals": {"journeys": sum(journeys.values()), **journeys},
        "nodes": execution_node_counts(project, execution),
        "created_at": execution.created_at,
        "expanded_at": execution.expanded_at,
        "finished_at": execution.finished_at,
    }


AT_NODE_PAGE = 50
# A keyset position in a node's list: the last row's due time and step id.
AtNodeCursor = tuple[datetime, int]


def subscribers_at_node(
    project: Project,
    execution: Execution,
    node_id: str,
    *,
    after: AtNodeCursor | None = None,
    limit: int = AT_NODE_PAGE,
) -> tuple[list[Step], AtNodeCursor | None]:
    """Open steps at a node, soonest due first, one page after ``after``; and the next page's cursor.

    Keyset rather than OFFSET: a node may hold most of a large audience, and each page
    costs the same however deep it is.
    """
    rows = (
        Step.objects.for_project(project)
        .filter(execution=execution, node_id=node_id, state__in=Step.OPEN_STATES)
        .select_related("subscriber")
        .order_by("due_at", "pk")
    )
    if after is not None:
        due_at, pk = after
        rows = rows.filter(Q(due_at__gt=due_at) | Q(due_at=due_at, pk__gt=pk))
    page = list(rows[: limit + 1])
    if len(page) <= limit:
        return page, None
    page = page[:limit]
    return page, (page[-1].due_at, page[-1].pk)


def journey_for(project: Project, execution: Execution, external_id: str) -> Journey:
    journey = (
        Journey.objects.for_project(project)
        .filter(execution=execution, subscriber__external_id=external_id)
        .select_related("subscriber")
        .order_by("-pk")
        .first()
    )
    if journey is None:
        raise NotFound(f"Subscriber {external_id!r} has no journey in execution {execution.pk}.")
    return journey


def journey_get(project: Project, journey_id: int) -> Journey:
    journey = (
        Journey.objects.for_project(project)
        .select_related("subscriber", "execution", "workflow", "execution__version")
        .filter(pk=journey_id)
        .first()
    )
    if journey is None:
        raise NotFound(f"No journey {journey_id} in this project.")
    return journey


def journey_path(project: Project, journey: Journey) -> list[Step]:
    return list(Step.objects.for_project(project).filter(journey=journey).order_by("pk"))


def journey_deliveries(project: Project, steps: list[Step]) -> dict[int, list[Any]]:
    """Messages each send step made, from the delivery ledger."""
    try:
        from apps.delivery.models import Delivery
    except ImportError:
        return {}
    result: dict[int, list[Any]] = defaultdict(list)
    rows = Delivery.objects.filter(
        project=project, origin_kind="journey_step", origin_id__in=[str(s.pk) for s in steps]
    ).order_by("pk")
    for delivery in rows:
        result[int(delivery.origin_id)].append(delivery)
    return dict(result)


def journey_messages(project: Project, steps: list[Step]) -> dict[int, list[tuple[Any, dict[str, Any] | None]]]:
    """Each send step's deliveries with the content they went out with: the snapshot taken
    when it was sent, never a re-render with the subscriber's fields as they are now.
    ``None`` for a message not sent, or whose snapshot is no longer kept."""
    from apps.delivery.selectors import sent_content_by_delivery

    deliveries = journey_deliveries(project, steps)
    contents = sent_content_by_delivery(project, (d.pk for rows in deliveries.values() for d in rows))
    return {step_id: [(d, contents.get(d.pk)) for d in rows] for step_id, rows in deliveries.items()}


def journey_summary(project: Project, journey: Journey) -> dict[str, Any]:
    steps = journey_path(project, journey)
    return {
        "journey": journey.pk,
        "subscriber": journey.subscriber.external_id,
        "state": journey.state,
        "current_node": journey.current_node,
        "stop_reason": journey.stop_reason,
        "path": [
            {
                "step": s.pk,
                "node": s.node_id,
                "type": s.node_type,
                "state": s.state,
                "outcome": s.outcome,
                "due_at": s.due_at,
                "finished_at": s.finished_at,
                "detail": s.detail,
            }
            for s in steps
        ],
    }
