"""Journeys: workflow graphs, their immutable versions, executions, journeys and steps.

Steps are the queue of record: a Celery message only wakes a batch runner, which claims
due steps with FOR UPDATE SKIP LOCKED. Nothing precomputes a subscriber's path: each
step is created when the previous one finishes.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import ProjectScopedModel


class Workflow(ProjectScopedModel):
    key = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    draft_graph = models.JSONField(default=dict, blank=True)
    # When false, a subscriber with an open journey in this workflow is not entered again.
    allow_reentry = models.BooleanField(default=False)
    # Every change of the draft graph counts one up. An editor saves against the revision it
    # last saw, so a second editor working on a stale draft is refused instead of overwriting.
    draft_revision = models.PositiveIntegerField(default=0)
    draft_changed_at = models.DateTimeField(null=True, blank=True)
    draft_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who changed it when no user did ("api", a key's name).
    draft_changed_via = models.CharField(max_length=64, blank=True, default="")
    # An archived workflow takes no new versions or executions; running ones carry on.
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "key"], name="workflow_key_unique_per_project")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.key


class DraftChange(ProjectScopedModel):
    """One change of a workflow's draft, kept so it can be undone and redone after a reload.

    The history is linear: undo marks the newest change that is not undone, redo clears
    the oldest that is; a new change drops every undone one (its redo branch).
    """

    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="draft_changes")
    seq = models.PositiveIntegerField()
    label = models.CharField(max_length=200)
    graph_before = models.JSONField()
    graph_after = models.JSONField()
    undone = models.BooleanField(default=False)
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    made_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workflow", "seq"], name="draft_change_unique_seq")]
        ordering = ["seq"]

    def __str__(self) -> str:
        return f"{self.workflow_id} #{self.seq} {self.label}"


class WorkflowVersion(ProjectScopedModel):
    """A published graph. Never updated: executions point at one version for their life."""

    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    graph = models.JSONField()
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    published_via = models.CharField(max_length=64, blank=True, default="")
    published_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "workflow", "number"], name="workflow_version_unique_number")
        ]
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"{self.workflow_id} v{self.number}"


class Execution(ProjectScopedModel):
    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        EXPANDING = "expanding", "Expanding"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        CANCELLED = "cancelled", "Cancelled"

    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="executions")
    version = models.ForeignKey(WorkflowVersion, on_delete=models.PROTECT, related_name="executions")
    # {"kind": "external_ids" | "segment" | "tag" | "everyone", "external_ids"|"segment_id"|"tag": ...}
    audience = models.JSONField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    unknown_external_ids = models.JSONField(default=list, blank=True)
    # Subscribers resolved for the audience but not entered (already in the workflow).
    skipped = models.PositiveIntegerField(default=0)
    entered = models.PositiveIntegerField(default=0)
    # Highest subscriber id expanded so far: a crashed expansion resumes after it.
    expansion_cursor = models.BigIntegerField(default=0)
    started_by = models.CharField(max_length=128, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    expanded_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "state"], name="execution_by_state")]

    def __str__(self) -> str:
        return f"execution {self.pk}"


class Journey(ProjectScopedModel):
    """One subscriber's way through one execution's version."""

    class State(models.TextChoices):
        ACTIVE = "active", "Active"
        WAITING = "waiting", "Waiting"
        COMPLETED = "completed", "Completed"
        STOPPED = "stopped", "Stopped"
        FAILED = "failed", "Failed"

    OPEN_STATES = (State.ACTIVE, State.WAITING)

    # Indexed through (execution, state) below; a second single-column index only slows inserts.
    execution = models.ForeignKey(Execution, on_delete=models.CASCADE, related_name="journeys", db_index=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="journeys")
    # Indexed through journey_by_subscriber below; the field's own index would be a duplicate.
    subscriber = models.ForeignKey(
        "subscribers.Subscriber", on_delete=models.CASCADE, related_name="journeys", db_index=False
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACTIVE)
    current_node = models.CharField(max_length=64, blank=True, default="")
    # Copied from the workflow at entry: exclusive journeys take part in the one-open-journey rule.
    exclusive = models.BooleanField(default=True)
    stop_reason = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "subscriber"],
                condition=Q(state__in=["active", "waiting"], exclusive=True),
                name="journey_one_open_per_workflow_subscriber",
            )
        ]
        indexes = [
            models.Index(fields=["execution", "state"], name="journey_by_execution_state"),
            models.Index(fields=["subscriber"], name="journey_by_subscriber"),
        ]

    def __str__(self) -> str:
        return f"journey {self.pk}"


class Step(ProjectScopedModel):
    """One node run for one journey. The queue of record for the batch runner."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        WAITING = "waiting", "Waiting"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    OPEN_STATES = (State.PENDING, State.WAITING, State.RUNNING)

    # Steps are the hottest insert path: every index costs on each of them, so the journey and
    # execution foreign keys are indexed only through the composite indexes below.
    # Project, execution and subscriber are copied from the journey, whose own constraints
    # hold them; a constraint here would check (and key-share lock) the one project and
    # execution row on every step insert, from every runner at once. Deletion still
    # cascades through the ORM.
    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    journey = models.ForeignKey(Journey, on_delete=models.CASCADE, related_name="steps", db_index=False)
    # Denormalised so counts per node and batch loading need no join.
    execution = models.ForeignKey(
        Execution, on_delete=models.CASCADE, related_name="steps", db_index=False, db_constraint=False
    )
    # Indexed for the merge hook, which moves a merged subscriber's steps.
    subscriber = models.ForeignKey(
        "subscribers.Subscriber", on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    # The path taken, for display; steps only ever go away with their journey.
    previous = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    node_id = models.CharField(max_length=64)
    node_type = models.CharField(max_length=32)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    due_at = models.DateTimeField()
    # The handle followed ("next", "yes", a case…), or why the step stopped or failed.
    outcome = models.CharField(max_length=64, blank=True, default="")
    detail = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Claims of this step that ended without recording an outcome (the runner died or the
    # batch failed as a whole): a step that keeps taking its batch down runs in a small
    # group, then alone, and ends as "poison" after TIDINGS_POISON_AFTER_CRASHES. A default in the database, since
    # the runner and the expansion insert steps with raw SQL.
    crashes = models.PositiveSmallIntegerField(db_default=0)
    # Set once the step has waited (for time or deliveries): when it comes due again it
    # resumes rather than starting over, even after a crashed claim is released.
    waited = models.BooleanField(default=False)
    claimed_until = models.DateTimeField(null=True, blank=True)
    claim_token = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The runner's claim: due steps only, so the index stays small as history grows.
            models.Index(
                fields=["due_at"],
                condition=Q(state__in=["pending", "waiting"]),
                name="step_due",
            ),
            models.Index(fields=["claimed_until"], condition=Q(state="running"), name="step_claimed"),
            # Due steps whose earlier claims crashed; they are claimed one at a time. Empty
            # unless something crashed, so it costs the hot insert path nothing.
            models.Index(
                fields=["due_at"],
                condition=Q(state__in=["pending", "waiting"], crashes__gt=0),
                name="step_suspect_due",
            ),
            models.Index(fields=["execution", "node_id", "state"], name="step_by_execution_node"),
            models.Index(fields=["journey", "node_id"], name="step_by_journey_node"),
        ]

    def __str__(self) -> str:
        return f"step {self.pk} {self.node_id} ({self.state})"
