"""The publish side of Tidings: what a caller asked for, and the outbox that relays it.

A ``Notification`` is the caller's intent, stored before the API answers 202. The
``OutboxEvent`` written in the same transaction is the durable promise that a router
will turn that intent into deliveries; the Celery wake-up that follows the commit is
only a hint, so a lost message never loses a notification.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.core.models import ProjectScopedModel


def _hot_project_fk() -> models.ForeignKey:
    """The project link on the publish path's tables, without a constraint or an index of
    its own: a constraint takes a key-share lock on the one project row per INSERT (at a
    thousand a second, multixact churn), and the composite indexes lead with the project."""
    return models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )


class Priority(models.TextChoices):
    """Maps one to one onto the delivery lanes."""

    HIGH = "high", "High"
    NORMAL = "normal", "Normal"
    BULK = "bulk", "Bulk"


class Notification(ProjectScopedModel):
    project = _hot_project_fk()

    class State(models.TextChoices):
        ACCEPTED = "accepted", "Accepted"  # stored, outbox not relayed yet
        ROUTED = "routed", "Routed"  # deliveries exist for every reachable destination

    template_key = models.CharField(max_length=100)
    # The version resolved when the notification was accepted: "key" means the latest
    # published version *at that moment*, so a later publish never changes this intent.
    # No constraint: versions are never deleted (PROTECT still guards the ORM), and a
    # constraint would key-share lock the version row on every publish.
    template_version = models.ForeignKey(
        "delivery.TemplateVersion", on_delete=models.PROTECT, related_name="+", db_index=False, db_constraint=False
    )
    template_number = models.PositiveIntegerField()
    channels = models.JSONField(default=list)
    # Normalised recipients: [{"subscriber": "ext-1"}, {"email": "a@example.com"}, ...]
    recipients = models.JSONField(default=list)
    priority = models.CharField(max_length=8, choices=Priority.choices, default=Priority.NORMAL)
    data = models.JSONField(default=dict, blank=True)
    send_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACCEPTED)
    # What the router did: counts, and every recipient/channel it could not reach, with why.
    routing = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    routed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "-created_at"], name="notification_project_created")]

    def __str__(self) -> str:
        return f"notification {self.pk} ({self.template_key}@{self.template_number})"


class OutboxEvent(ProjectScopedModel):
    """One row per notification to relay. ``relayed_at`` set = the deliveries exist."""

    project = _hot_project_fk()
    notification = models.OneToOneField(Notification, on_delete=models.CASCADE, related_name="outbox_event")
    lane = models.CharField(max_length=8, choices=Priority.choices, default=Priority.NORMAL)
    created_at = models.DateTimeField(default=timezone.now)
    relayed_at = models.DateTimeField(null=True, blank=True)
    relay_attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            # The relay claims only pending rows; the partial index stays as small as the backlog.
            models.Index(fields=["project", "lane", "id"], condition=Q(relayed_at__isnull=True), name="outbox_pending"),
        ]

    def __str__(self) -> str:
        return f"outbox {self.pk} for notification {self.notification_id}"


class Broadcast(ProjectScopedModel):
    """One template to a segment, a tag or a list of subscribers, on the bulk lane."""

    class Audience(models.TextChoices):
        SEGMENT = "segment", "Segment"
        TAG = "tag", "Tag"
        LIST = "list", "List"

    class State(models.TextChoices):
        ACCEPTED = "accepted", "Accepted"
        ENQUEUED = "enqueued", "Enqueued"
        FAILED = "failed", "Failed"

    template_key = models.CharField(max_length=100)
    template_version = models.ForeignKey(
        "delivery.TemplateVersion", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    template_number = models.PositiveIntegerField()
    channels = models.JSONField(default=list)
    audience_kind = models.CharField(max_length=8, choices=Audience.choices)
    # segment id, tag name, or (for a list) nothing: the ids are in ``subscriber_ids``.
    audience_ref = models.CharField(max_length=255, blank=True, default="")
    subscriber_ids = models.JSONField(default=list, blank=True)
    data = models.JSONField(default=dict, blank=True)
    send_at = models.DateTimeField(null=True, blank=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACCEPTED)
    enqueued = models.JSONField(default=dict, blank=True)  # channel -> deliveries created
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"broadcast {self.pk} to {self.audience_kind} {self.audience_ref}"
