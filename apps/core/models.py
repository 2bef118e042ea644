"""Shared primitives: the tenant-scoped base model and platform bookkeeping rows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import models

if TYPE_CHECKING:
    from apps.projects.models import Project


class ProjectScopedQuerySet(models.QuerySet):
    def for_project(self, project: Project | int) -> ProjectScopedQuerySet:
        project_id = project if isinstance(project, int) else project.pk
        return self.filter(project_id=project_id)


class ProjectScopedManager(models.Manager.from_queryset(ProjectScopedQuerySet)):  # type: ignore[misc]
    """Every query on tenant data should start with ``for_project``."""


class ProjectScopedModel(models.Model):
    """Base for every tenant-owned row: an indexed project and a scoped manager.

    Unique constraints on subclasses must include ``project`` so two tenants never
    collide on their own identifiers.
    """

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="+", db_index=True)

    objects = ProjectScopedManager()

    class Meta:
        abstract = True

    def belongs_to(self, project: Any) -> bool:
        return self.project_id == getattr(project, "pk", project)


class Heartbeat(models.Model):
    """Last time a background process proved it is alive (read by /health)."""

    name = models.CharField(max_length=64, primary_key=True)
    at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} @ {self.at:%Y-%m-%d %H:%M:%S}"


class IdempotencyRecord(ProjectScopedModel):
    """A POST made with an ``Idempotency-Key``: its fingerprint and, once done, its answer."""

    class State(models.TextChoices):
        IN_PROGRESS = "in_progress", "In progress"
        COMPLETED = "completed", "Completed"

    # Who may have the answer replayed: callers with the same powers (for API keys, one
    # namespace per key type and scope set), so a replay never reaches a caller that could
    # not have made the request.
    namespace = models.CharField(max_length=64)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.IN_PROGRESS)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_headers = models.JSONField(default=dict, blank=True)
    response_body = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "namespace", "key"], name="idempotency_unique_key_per_namespace")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"
