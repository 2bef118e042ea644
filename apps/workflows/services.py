"""Workflow writes: drafts, publishing, executions, stopping and cancelling journeys."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.dbcompat import int_array
from apps.core.errors import ApplicationError, Conflict, NotFound
from apps.core.models import IdempotencyRecord
from apps.projects.models import Project
from apps.workflows import rollup
from apps.workflows.audience import audience_resolve, audience_rows
from apps.workflows.diff import workflow_version_diff
from apps.workflows.graph import EMPTY_GRAPH, Graph, graph_issues, shape_issues
from apps.workflows.models import Execution, Journey, Step, Workflow, WorkflowVersion

EXPANSION_CHUNK = 5_000


def _invalid_graph(issues: list[Any]) -> ApplicationError:
    first = issues[0]
    return ApplicationError(
        f"The graph is not valid: {first.message}" + (f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""),
        code="invalid_graph",
        extra={"errors": [issue.as_dict() for issue in issues]},
    )


@transaction.atomic
def workflow_save_draft(
    *,
    project: Project,
    key: str,
    name: str | None = None,
    graph: Any = None,
    allow_reentry: bool | None = None,
    changed_by: Any = None,
    changed_via: str = "api",
) -> tuple[Workflow, bool]:
    """Create the workflow or update its draft. Only the graph's shape is checked here:
    a draft may be unfinished; the full rules run on publish. A changed graph moves the
    draft's revision on (an editor open on the old one is told) and can be undone."""
    if graph is not None:
        issues = shape_issues(graph)
        if issues:
            raise _invalid_graph(issues)
    workflow = Workflow.objects.for_project(project).select_for_update().filter(key=key).first()
    created = workflow is None
    if workflow is None:
        workflow = Workflow(project=project, key=key, name=name or key, draft_graph=graph or dict(EMPTY_GRAPH))
    if name is not None:
        workflow.name = name
    if allow_reentry is not None:
        workflow.allow_reentry = allow_reentry
    before = workflow.draft_graph
    workflow.save()
    if graph is not None and not created and graph != before:
        from apps.workflows.builder.history import draft_record

        draft_record(
            workflow=workflow, before=before, after=graph, label="Save the draft", user=changed_by, via=changed_via
        )
    return workflow, created


@transaction.atomic
def workflow_publish(
    *, project: Project, workflow: Workflow, published_by: Any = None, published_via: str = ""
) -> WorkflowVersion:
    """Validate the draft and freeze it as the next immutable version.

    A draft with nothing new since the last version is refused: a second identical
    version would only make the history lie about when the journey changed."""
    workflow = Workflow.objects.select_for_update().get(pk=workflow.pk, project=project)
    if workflow.archived_at is not None:
        raise Conflict(f"Workflow {workflow.key!r} is archived; it takes no new versions.", code="workflow_archived")
    latest = workflow.versions.order_by("-number").first()
    if latest is not None and workflow_version_diff(latest.graph, workflow.draft_graph).is_empty:
        raise Conflict(
            f"The draft is the same as version {latest.number}; change it before publishing.",
            code="draft_unchanged",
            extra={"version": latest.number},
        )
    issues = graph_issues(workflow.draft_graph, project=project)
    if issues:
        raise _invalid_graph(issues)
    number = (latest.number if latest else 0) + 1
    return WorkflowVersion.objects.create(
        project=project,
        workflow=workflow,
        number=number,
        graph=workflow.draft_graph,
        published_by=published_by if getattr(published_by, "pk", None) else None,
        published_via=published_via[:64],
    )


@transaction.atomic
def workflow_archive(*, project: Project, workflow: Workflow) -> Workflow:
    """Retire a workflow: nothing new is published or started; open journeys finish."""
    workflow = Workflow.objects.select_for_update().get(pk=workflow.pk, project=project)
    if workflow.archived_at is None:
        workflow.archived_at = timezone.now()
        workflow.save(update_fields=["archived_at", "updated_at"])
    return workflow


def _free_key(project: Project, base: str) -> str:
    taken = set(Workflow.objects.for_project(project).filter(key__startswith=base[:56]).values_list("key", flat=True))
    for n in range(1, 1000):
        suffix = "-copy" if n == 1 else f"-copy-{n}"
        key = base[: 64 - len(suffix)] + suffix
        if key not in taken:
            return key
    raise Conflict(f"Workflow {base!r} has too many copies already.", code="too_many_copies")


@transaction.atomic
def workflow_duplicate(*, project: Project, workflow: Workflow, changed_by: Any = None) -> Workflow:
    """A new workflow whose draft is this one's draft; it has no versions of its own yet."""
    source = Workflow.objects.get(pk=workflow.pk, project=project)
    return Workflow.objects.create(
        project=project,
        key=_free_key(project, source.key),
        name=f"{source.name} (copy)"[:200],
        draft_graph=source.draft_graph,
        allow_reentry=source.allow_reentry,
        draft_changed_at=timezone.now(),
        draft_changed_by=changed_by if getattr(changed_by, "pk", None) else None,
        draft_changed_via=f"copy of {source.key}"[:64],
    )


@transaction.atomic
def execution_start(
    *,
    project: Project,
    workflow: Workflow,
    audience: dict[str, Any],
    version_number: int | None = None,
    started_by: str = "",
) -> Execution:
    """Record an execution; expansion into journeys happens in the background."""
    if workflow.archived_at is not None:
        raise Conflict(f"Workflow {workflow.key!r} is archived; it starts no new executions.", code="workflow_archived")
    versions = WorkflowVersion.objects.for_project(project).filter(workflow=workflow)
    version = versions.filter(number=version_number).first() if version_number else versions.order_by("-number").first()
    if version is None:
        if version_number:
            raise NotFound(f"Workflow {workflow.key!r} has no version {version_number}.", field="version")
        raise Conflict(
            f"Workflow {workflow.key!r} has no published version; publish it first.", code="workflow_not_published"
        )
    resolved, unknown = audience_resolve(project, audience)
    execution = Execution.objects.create(
        project=project,
        workflow=workflow,
        version=version,
        audience=resolved,
        unknown_external_ids=unknown,
        started_by=started_by[:128],
    )
    from apps.workflows.tasks import QUEUE, expand_execution

    transaction.on_commit(lambda: expand_execution.apply_async((project.pk, execution.pk), queue=QUEUE))
    return execution


# One namespace for every console start: a token is only ever handed out by the confirm page.
START_ONCE_NAMESPACE = "console:execution_start"


def execution_start_once(
    *,
    project: Project,
    workflow: Workflow,
    audience: dict[str, Any],
    token: str,
    version_number: int | None = None,
    started_by: str = "",
) -> tuple[Execution, bool]:
    """Start an execution at most once per token: (the execution, whether this call started it).

    The token is recorded in the same transaction as the execution, under a unique key, so
    a second submit of the same form waits for the first to commit and then finds its
    execution instead of starting another; a start that fails leaves the token unused.
    """
    existing = _execution_started_under(project, token)
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                project=project,
                namespace=START_ONCE_NAMESPACE,
                key=token,
                fingerprint=hashlib.sha256(f"workflow:{workflow.pk}".encode()).hexdigest(),
                state=IdempotencyRecord.State.COMPLETED,
                expires_at=timezone.now() + timedelta(hours=settings.TIDINGS_IDEMPOTENCY_TTL_HOURS),
            )
            execution = execution_start(
                project=project,
                workflow=workflow,
                audience=audience,
                version_number=version_number,
                started_by=started_by,
            )
            record.response_body = str(execution.pk).encode()
            record.save(update_fields=["response_body"])
    except IntegrityError:
        existing = _execution_started_under(project, token)
        if existing is None:
            raise Conflict("This start is already being processed.", code="execution_start_in_progress") from None
        return existing, False
    return execution, True


def _execution_started_under(project: Project, token: str) -> Execution | None:
    body = (
        IdempotencyRecord.objects.for_project(project)
        .filter(namespace=START_ONCE_NAMESPACE, key=token)
        .values_list("response_body", flat=True)
        .first()
    )
    if not body:
        return None
    return Execution.objects.for_project(project).filter(pk=int(bytes(body).decode())).first()


def _audience_chunk(execution: Execution, after: int) -> list[int]:
    audience = execution.audience
    if audience["kind"] == "external_ids":
        return [i for i in audience["subscriber_ids"] if i > after][:EXPANSION_CHUNK]
    rows, column = audience_rows(execution.project_id, audience)
    return list(
        rows.filter(**{f"{column}__gt": after}).order_by(column).values_list(column, flat=True)[:EXPANSION_CHUNK]
    )


def execution_expand_chunk(*, project: Project, execution_id: int) -> bool:
    """Expand the next chunk of the audience into journeys and their first steps.

    Set-based: one INSERT ... SELECT for the journeys (a subscriber already open in an
    exclusive journey of this workflow is skipped by the partial unique index) and one for
    their start steps. Answers True while more remains.
    """
    with transaction.atomic():
        execution = (
            Execution.objects.select_for_update().select_related("workflow").get(pk=execution_id, project=project)
        )
        if execution.state not in (Execution.State.PENDING, Execution.State.EXPANDING):
            return False
        ids = _audience_chunk(execution, execution.expansion_cursor)
        start = Graph.parse(execution.version.graph).start
        entered = 0
        params = {
            "p": project.pk,
            "e": execution.pk,
            "w": execution.workflow_id,
            "start": start,
            "exclusive": not execution.workflow.allow_reentry,
            "ids": ids,
        }
        if ids:
            with connection.cursor() as cursor:
                cursor.execute(
                    """
                    WITH ins AS (
                        INSERT INTO workflows_journey (project_id, execution_id, workflow_id, subscriber_id, state,
                                                       current_node, exclusive, stop_reason, created_at)
                        SELECT %(p)s, %(e)s, %(w)s, sid, 'active', %(start)s, %(exclusive)s, '', now()
                        FROM unnest(%(ids)s::bigint[]) AS sid
                        ON CONFLICT DO NOTHING
                        RETURNING id, subscriber_id
                    )
                    INSERT INTO workflows_step (project_id, journey_id, execution_id, subscriber_id, node_id,
                                                node_type, state, due_at, outcome, detail, attempts, waited, created_at)
                    SELECT %(p)s, ins.id, %(e)s, ins.subscriber_id, %(start)s, 'start', 'pending', now(), '',
                           '{}'::jsonb, 0, false, now()
                    FROM ins
                    """,
                    params,
                )
                entered = cursor.rowcount
        execution.entered += entered
        execution.skipped += len(ids) - entered
        more = len(ids) == EXPANSION_CHUNK
        if ids:
            execution.expansion_cursor = ids[-1]
        now = timezone.now()
        if more:
            execution.state = Execution.State.EXPANDING
        else:
            execution.state = Execution.State.RUNNING
            execution.expanded_at = now
        execution.save(update_fields=["entered", "skipped", "expansion_cursor", "state", "expanded_at"])
        if entered:
            from apps.workflows.tasks import wake_runners

            transaction.on_commit(wake_runners)
    if not more:
        # After commit, so journeys that runners finished meanwhile are all visible.
        rollup.executions_refresh([execution.pk], timezone.now())
    return more


@transaction.atomic
def execution_cancel(*, project: Project, execution: Execution) -> Execution:
    execution = Execution.objects.select_for_update().get(pk=execution.pk, project=project)
    if execution.state in (Execution.State.COMPLETED, Execution.State.CANCELLED):
        raise Conflict(f"Execution {execution.pk} is already {execution.state}.", code="execution_finished")
    now = timezone.now()
    open_ids = list(
        Journey.objects.filter(execution=execution, state__in=Journey.OPEN_STATES).values_list("pk", flat=True)
    )
    rollup.journeys_lock_open(open_ids)
    rollup.journeys_end(dict.fromkeys(open_ids, ("stopped", "execution cancelled")), now)
    execution.state = Execution.State.CANCELLED
    execution.finished_at = now
    execution.save(update_fields=["state", "finished_at"])
    return execution


@transaction.atomic
def journeys_stop(*, project: Project, journeys: Sequence[Journey], reason: str = "stopped") -> int:
    """Stop subscribers' journeys: pending steps and their deliveries are cancelled."""
    ids = [j.pk for j in journeys if j.project_id == project.pk]
    open_ids = rollup.journeys_lock_open(ids)
    if not open_ids:
        return 0
    now = timezone.now()
    rollup.journeys_end(dict.fromkeys(open_ids, ("stopped", reason)), now)
    return len(open_ids)


def steps_wake_for_deliveries(outcomes: Sequence[Any]) -> None:
    """Origin listener for "journey_step": a delivery reached a final state, so its send
    step is due now; the runner re-reads every delivery of the step before moving on."""
    step_ids = sorted({int(o.origin_id) for o in outcomes if str(o.origin_id).isdigit()})
    if not step_ids:
        return
    projects = sorted({o.project_id for o in outcomes})
    woken = _steps_wake(step_ids, projects)
    if woken:
        from apps.workflows.tasks import wake_runners

        transaction.on_commit(wake_runners)


def _steps_wake(step_ids: list[int], projects: list[int]) -> int:
    # One statement per outcome batch, however many deliveries it reports.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE workflows_step SET due_at = %s"
            " WHERE id = ANY(%s::bigint[]) AND project_id = ANY(%s::bigint[]) AND state = 'waiting'",
            [timezone.now(), int_array(step_ids), int_array(projects)],
        )
        return cursor.rowcount


def journeys_move_subscriber(project_id: int, from_id: int, to_id: int) -> None:
    """Merge hook: the surviving subscriber takes over the merged one's journeys. Where
    both are open in the same exclusive workflow, the merged one's journey stops."""
    now = timezone.now()
    clash = list(
        Journey.objects.filter(
            project_id=project_id, subscriber_id=from_id, state__in=Journey.OPEN_STATES, exclusive=True
        )
        .filter(
            workflow_id__in=Journey.objects.filter(
                project_id=project_id, subscriber_id=to_id, state__in=Journey.OPEN_STATES, exclusive=True
            ).values("workflow_id")
        )
        .values_list("pk", flat=True)
    )
    if clash:
        rollup.journeys_lock_open(clash)
        rollup.journeys_end(dict.fromkeys(clash, ("stopped", "merged into another subscriber")), now)
    Journey.objects.filter(project_id=project_id, subscriber_id=from_id).update(subscriber_id=to_id)
    Step.objects.filter(project_id=project_id, subscriber_id=from_id).update(subscriber_id=to_id)


def journeys_stop_for_erased(project_id: int, subscriber_id: int) -> None:
    """Erase hook: an erased subscriber's journeys stop at once."""
    open_ids = list(
        Journey.objects.filter(
            project_id=project_id, subscriber_id=subscriber_id, state__in=Journey.OPEN_STATES
        ).values_list("pk", flat=True)
    )
    if open_ids:
        rollup.journeys_lock_open(open_ids)
        rollup.journeys_end(dict.fromkeys(open_ids, ("stopped", "subscriber erased")), timezone.now())
