"""Staff inspection of journeys. Drafts and versions change only through the services, so
everything here is read-only; publishing, duplicating and archiving are admin actions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from apps.core.errors import ApplicationError
from apps.workflows import services
from apps.workflows.diff import workflow_version_diff
from apps.workflows.models import Execution, Workflow, WorkflowVersion


class WorkflowVersionInline(admin.TabularInline):
    model = WorkflowVersion
    fields = ("number", "published_at", "published_by", "published_via")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False
    ordering = ("-number",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Workflow)
class WorkflowAdmin(admin.ModelAdmin):
    list_display = ("key", "name", "project", "status", "version_count", "draft_revision", "updated_at", "builder")
    list_filter = ("project", ("archived_at", admin.EmptyFieldListFilter))
    search_fields = ("key", "name")
    readonly_fields = (
        "project",
        "key",
        "name",
        "status",
        "builder",
        "allow_reentry",
        "draft_revision",
        "draft_changed_at",
        "draft_changed_by",
        "draft_changed_via",
        "archived_at",
        "draft_graph",
        "created_at",
        "updated_at",
    )
    fields = readonly_fields
    inlines = (WorkflowVersionInline,)
    actions = ("publish_draft", "duplicate", "archive")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Workflow]:
        return super().get_queryset(request).select_related("project").annotate(version_count=Count("versions"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    # Viewing only: a saved form would bypass the draft's revision and undo history.
    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="versions", ordering="version_count")
    def version_count(self, obj: Workflow) -> int:
        return getattr(obj, "version_count", None) or obj.versions.count()

    @admin.display(description="status")
    def status(self, obj: Workflow) -> str:
        if obj.archived_at is not None:
            return "archived"
        latest = obj.versions.order_by("-number").first()
        if latest is None:
            return "draft only"
        if workflow_version_diff(latest.graph, obj.draft_graph).is_empty:
            return f"published v{latest.number}"
        return f"v{latest.number}, draft changed"

    @admin.display(description="builder")
    def builder(self, obj: Workflow) -> str:
        # The console shows the signed-in member's current project.
        url = reverse("workflows_console:builder", args=[obj.key])
        return format_html('<a href="{}">Open in builder</a>', url)

    def _each(self, request: HttpRequest, queryset: QuerySet[Workflow], call: Callable[[Workflow], str]) -> None:
        # One workflow's refusal (an unchanged or invalid draft) must not stop the others.
        for workflow in queryset.select_related("project"):
            try:
                said = call(workflow)
            except ApplicationError as exc:
                self.message_user(request, f"Workflow {workflow.key}: {exc.message}", messages.ERROR)
            else:
                self.message_user(request, f"Workflow {workflow.key}: {said}.", messages.SUCCESS)

    @admin.action(description="Publish the draft as a new version")
    def publish_draft(self, request: HttpRequest, queryset: QuerySet[Workflow]) -> None:
        def publish(workflow: Workflow) -> str:
            version = services.workflow_publish(
                project=workflow.project, workflow=workflow, published_by=request.user, published_via="admin"
            )
            return f"published version {version.number}"

        self._each(request, queryset, publish)

    @admin.action(description="Duplicate (a new workflow with the same draft)")
    def duplicate(self, request: HttpRequest, queryset: QuerySet[Workflow]) -> None:
        def copy(workflow: Workflow) -> str:
            made = services.workflow_duplicate(project=workflow.project, workflow=workflow, changed_by=request.user)
            return f"copied as {made.key}"

        self._each(request, queryset, copy)

    @admin.action(description="Archive (no new versions or executions)")
    def archive(self, request: HttpRequest, queryset: QuerySet[Workflow]) -> None:
        def archive(workflow: Workflow) -> str:
            services.workflow_archive(project=workflow.project, workflow=workflow)
            return "archived"

        self._each(request, queryset, archive)


@admin.register(Execution)
class ExecutionAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "workflow", "version", "state", "entered", "skipped", "created_at")
    list_filter = ("state",)
    search_fields = ("=id", "workflow__key")
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
