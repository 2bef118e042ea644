"""Who messages go to: subscribers, their devices, tags, segments and preferences."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from apps.core.models import ProjectScopedModel


class Channel(models.TextChoices):
    """Delivery channels, shared by preferences, templates and deliveries."""

    EMAIL = "email", "Email"
    PUSH = "push", "Push"
    SMS = "sms", "SMS"
    WHATSAPP = "whatsapp", "WhatsApp"
    SLACK = "slack", "Slack"
    TEAMS = "teams", "Microsoft Teams"
    WEBHOOK = "webhook", "Webhook"


class Subscriber(ProjectScopedModel):
    external_id = models.CharField(max_length=255, null=True, blank=True)
    anonymous_id = models.CharField(max_length=255, null=True, blank=True)
    email = models.EmailField(max_length=254, blank=True, default="")
    phone = models.CharField(max_length=16, blank=True, default="", help_text="E.164, e.g. +351912345678")
    timezone = models.CharField(max_length=64, blank=True, default="")
    locale = models.CharField(max_length=35, blank=True, default="")
    attributes = models.JSONField(default=dict, blank=True)
    # Set when this (anonymous) subscriber was merged into an identified one; later calls
    # with its anonymous id resolve to ``merged_into``.
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    erased_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"],
                condition=Q(external_id__isnull=False),
                name="subscriber_external_id_unique_per_project",
            ),
            models.UniqueConstraint(
                fields=["project", "anonymous_id"],
                condition=Q(anonymous_id__isnull=False),
                name="subscriber_anonymous_id_unique_per_project",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "email"], name="subscriber_project_email"),
            # Almost every row has no merged_into: index only the aliases.
            models.Index(fields=["merged_into"], condition=Q(merged_into__isnull=False), name="subscriber_merged_into"),
        ]

    def __str__(self) -> str:
        return self.external_id or self.anonymous_id or f"subscriber {self.pk}"


class Device(ProjectScopedModel):
    class Platform(models.TextChoices):
        IOS = "ios", "iOS"
        ANDROID = "android", "Android"
        WEB = "web", "Web"

    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="devices")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    token = models.CharField(max_length=4096)
    active = models.BooleanField(default=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    deactivated_reason = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "token"], name="device_token_unique_per_project")]

    def __str__(self) -> str:
        return f"{self.platform}:{self.token[:12]}…"


class Tag(ProjectScopedModel):
    name = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="tag_name_unique_per_project")]

    def __str__(self) -> str:
        return self.name


# SubscriberTag and TagEvent are the high-volume tables (an import of a million people
# writes two million of each). They are only ever written by set-based statements that
# join to existing subscribers and tags, and deletions cascade through the ORM, so they
# skip the per-row database FK triggers (which cost more than the inserts themselves)
# and the single-column indexes that the composite ones already cover.
class SubscriberTag(ProjectScopedModel):
    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    subscriber = models.ForeignKey(
        Subscriber, on_delete=models.CASCADE, related_name="subscriber_tags", db_constraint=False, db_index=False
    )
    tag = models.ForeignKey(
        Tag, on_delete=models.CASCADE, related_name="subscriber_tags", db_constraint=False, db_index=False
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subscriber", "tag"], name="subscriber_tag_unique")]
        indexes = [models.Index(fields=["tag", "subscriber"], name="subscriber_tag_by_tag")]


class TagEvent(ProjectScopedModel):
    """Append-only: every tag added or removed, and by what."""

    class Action(models.TextChoices):
        ADDED = "added", "Added"
        REMOVED = "removed", "Removed"

    class Source(models.TextChoices):
        API = "api", "API"
        CONSOLE = "console", "Console"
        WORKFLOW = "workflow", "Workflow"
        IMPORT = "import", "Import"

    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="tag_events", db_constraint=False)
    tag_name = models.CharField(max_length=64)
    action = models.CharField(max_length=8, choices=Action.choices)
    source = models.CharField(max_length=16, choices=Source.choices)
    source_ref = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)


class Segment(ProjectScopedModel):
    """Membership computed from tag rules, materialised in ``SegmentMembership``."""

    name = models.CharField(max_length=200)
    rules = models.JSONField(help_text="Nested groups of all/any/none tag predicates joined by and/or.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="segment_name_unique_per_project")]

    def __str__(self) -> str:
        return self.name


# Membership is high-volume too (an import into a project with segments writes a row
# per member and segment) and is written the same way, so it skips the FK triggers as
# well, and the project and segment indexes: lookups go by (segment, subscriber) or by
# subscriber.
class SegmentMembership(ProjectScopedModel):
    project = models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    segment = models.ForeignKey(
        Segment, on_delete=models.CASCADE, related_name="memberships", db_constraint=False, db_index=False
    )
    subscriber = models.ForeignKey(
        Subscriber, on_delete=models.CASCADE, related_name="segment_memberships", db_constraint=False
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["segment", "subscriber"], name="segment_membership_unique")]


class ChannelPreference(ProjectScopedModel):
    """An opt-out: a whole channel (empty category) or one category on a channel."""

    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="preferences")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    category = models.CharField(max_length=64, blank=True, default="")
    opted_out = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subscriber", "channel", "category"], name="preference_unique")]


class ImportJob(ProjectScopedModel):
    """One uploaded CSV/NDJSON file being turned into subscribers, with its progress."""

    class Format(models.TextChoices):
        CSV = "csv", "CSV"
        NDJSON = "ndjson", "NDJSON"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    file_name = models.CharField(max_length=500, help_text="Path in the default storage.")
    original_name = models.CharField(max_length=255, blank=True, default="")
    format = models.CharField(max_length=8, choices=Format.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    size_bytes = models.BigIntegerField(default=0)
    rows_total = models.IntegerField(null=True, blank=True)
    rows_done = models.IntegerField(default=0)
    rows_imported = models.IntegerField(default=0)
    rows_failed = models.IntegerField(default=0)
    # Highest physical line committed so far (chunks may commit out of order).
    lines_committed = models.IntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True, help_text="[{line, message}], capped.")
    error = models.TextField(blank=True, default="", help_text="Why the whole file failed, if it did.")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "status"], name="import_job_project_status")]

    def __str__(self) -> str:
        return f"import {self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in {self.Status.SUCCEEDED, self.Status.FAILED}
