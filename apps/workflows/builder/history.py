"""Draft writes for the builder: one edit, undo and redo, each against the revision the editor saw.

Every change of a draft goes through ``draft_record`` (the builder's edits and the API's
saves alike), so the revision always moves and the history can always undo it. A save
against a revision that is no longer current is refused, naming who changed the draft
and when, so no editor overwrites another's work without seeing it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from apps.core.errors import Conflict
from apps.projects.models import Project
from apps.workflows.builder.edits import Edited, EditError
from apps.workflows.models import DraftChange, Workflow, WorkflowVersion

# At least this many steps can be undone; older ones are forgotten.
HISTORY_LIMIT = 150


class DraftConflict(Conflict):
    default_code = "draft_changed"


@dataclass(frozen=True)
class DraftSaved:
    workflow: Workflow
    label: str
    focus: list[str]
    # What undo and redo would do next, when the write already knows it.
    history: dict[str, str | None] | None = None


def _changed_by(workflow: Workflow) -> str:
    if workflow.draft_changed_by_id and workflow.draft_changed_by is not None:
        return workflow.draft_changed_by.get_username()
    return workflow.draft_changed_via or "someone else"


def _locked(project: Project, workflow_id: int, revision: int | None) -> Workflow:
    workflow = (
        Workflow.objects.for_project(project)
        .select_for_update(of=("self",))
        .select_related("draft_changed_by")
        .get(pk=workflow_id)
    )
    if revision is not None and revision != workflow.draft_revision:
        at = workflow.draft_changed_at.astimezone(UTC) if workflow.draft_changed_at else None
        when = f" at {at:%H:%M} UTC" if at else ""
        raise DraftConflict(
            f"This draft was changed by {_changed_by(workflow)}{when} — reload to see it before you edit.",
            extra={"revision": workflow.draft_revision},
        )
    return workflow


def draft_record(*, workflow: Workflow, before: Any, after: Any, label: str, user: Any = None, via: str = "") -> None:
    """Store ``after`` as the draft of a locked ``workflow`` and remember how to undo it."""
    # The changes that could still be redone go (a new change ends that branch), and so do
    # the oldest beyond the limit: one statement, as every edit pays for it.
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM workflows_draftchange WHERE workflow_id = %s AND (undone OR seq < ("
            " SELECT seq FROM workflows_draftchange WHERE workflow_id = %s AND NOT undone"
            " ORDER BY seq DESC OFFSET %s LIMIT 1))",
            [workflow.pk, workflow.pk, HISTORY_LIMIT - 1],
        )
    # Revisions only grow, so the revision a change makes orders the history.
    DraftChange.objects.create(
        project_id=workflow.project_id,
        workflow=workflow,
        seq=workflow.draft_revision + 1,
        label=label[:200],
        graph_before=before,
        graph_after=after,
        made_by=user if getattr(user, "pk", None) else None,
    )
    _store(workflow, after, user, via)


def _store(workflow: Workflow, graph: Any, user: Any, via: str) -> None:
    workflow.draft_graph = graph
    workflow.draft_revision += 1
    workflow.draft_changed_at = timezone.now()
    workflow.draft_changed_by = user if getattr(user, "pk", None) else None
    workflow.draft_changed_via = via[:64]
    workflow.save(
        update_fields=[
            "draft_graph",
            "draft_revision",
            "draft_changed_at",
            "draft_changed_by",
            "draft_changed_via",
            "updated_at",
        ]
    )


@transaction.atomic
def workflow_draft_edit(
    *, project: Project, workflow: Workflow, revision: int, user: Any, edit: Callable[[dict[str, Any]], Edited]
) -> DraftSaved:
    """Apply one builder edit to the draft saved at ``revision``."""
    locked = _locked(project, workflow.pk, revision)
    before = locked.draft_graph or {"nodes": [], "edges": []}
    edited = edit(before)
    if edited.graph == before:
        return DraftSaved(locked, "", edited.focus)
    draft_record(workflow=locked, before=before, after=edited.graph, label=edited.label, user=user, via="console")
    return DraftSaved(locked, edited.label, edited.focus, {"undo": edited.label[:200], "redo": None})


@transaction.atomic
def workflow_draft_undo(*, project: Project, workflow: Workflow, revision: int, user: Any) -> DraftSaved:
    locked = _locked(project, workflow.pk, revision)
    change = DraftChange.objects.filter(workflow=locked, undone=False).order_by("-seq").first()
    if change is None:
        raise EditError("There is nothing to undo.", code="nothing_to_undo")
    change.undone = True
    change.save(update_fields=["undone"])
    _store(locked, change.graph_before, user, "console")
    return DraftSaved(locked, f"Undid “{change.label}”", [])


@transaction.atomic
def workflow_draft_redo(*, project: Project, workflow: Workflow, revision: int, user: Any) -> DraftSaved:
    locked = _locked(project, workflow.pk, revision)
    change = DraftChange.objects.filter(workflow=locked, undone=True).order_by("seq").first()
    if change is None:
        raise EditError("There is nothing to redo.", code="nothing_to_redo")
    change.undone = False
    change.save(update_fields=["undone"])
    _store(locked, change.graph_after, user, "console")
    return DraftSaved(locked, f"Redid “{change.label}”", [])


def history_state(workflow: Workflow) -> dict[str, str | None]:
    """What undo and redo would do now (their labels, or None)."""
    undo = DraftChange.objects.filter(workflow=workflow, undone=False).order_by("-seq").values_list("label", flat=True)
    redo = DraftChange.objects.filter(workflow=workflow, undone=True).order_by("seq").values_list("label", flat=True)
    return {"undo": undo.first(), "redo": redo.first()}


@transaction.atomic
def workflow_draft_restore(
    *, project: Project, workflow: Workflow, version: WorkflowVersion, user: Any, revision: int | None = None
) -> DraftSaved:
    """Make a published version's graph the draft again: one more change, undone like any edit."""
    locked = _locked(project, workflow.pk, revision)
    if version.workflow_id != locked.pk or version.project_id != project.pk:
        raise EditError("That version belongs to another journey.", code="version_other_workflow")
    before = locked.draft_graph or {"nodes": [], "edges": []}
    label = f"Restore version {version.number}"
    if version.graph == before:
        return DraftSaved(locked, "", [])
    draft_record(workflow=locked, before=before, after=version.graph, label=label, user=user, via="console")
    return DraftSaved(locked, label, [], {"undo": label, "redo": None})
