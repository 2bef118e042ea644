"""The delivery ledger: templates, connectors, deliveries and everything that happened to them.

Postgres rows are the queue of record. A Delivery is claimed by the dispatcher with
``FOR UPDATE SKIP LOCKED``; the partial indexes below keep that claim cheap however many
finished rows pile up (they only contain rows that are waiting).
"""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models import Q

from apps.core import crypto
from apps.core.models import ProjectScopedModel
from apps.subscribers.models import Channel


class Lane(models.TextChoices):
    HIGH = "high", "High"
    NORMAL = "normal", "Normal"
    BULK = "bulk", "Bulk"


def _hot_project_fk() -> models.ForeignKey:
    """The project link of the hot ledger tables, without a database constraint or a
    single-column index: every insert would otherwise take a key-share lock on the one
    project row (multixact churn at millions of rows), and composite indexes that start
    with the project already serve every query. Deletion still cascades through the ORM."""
    return models.ForeignKey(
        "projects.Project", on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )


class Layout(ProjectScopedModel):
    """An email shell; ``{{ content }}`` marks where a message's HTML goes."""

    name = models.CharField(max_length=200)
    html = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="layout_name_unique_per_project")]

    def __str__(self) -> str:
        return self.name


class Template(ProjectScopedModel):
    """A named message; its content lives in immutable versions, one content block per channel."""

    key = models.SlugField(max_length=100)
    # The channel the template was created for; a version may carry content for others too.
    channel = models.CharField(max_length=16, choices=Channel.choices)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "key"], name="template_key_unique_per_project")]

    def __str__(self) -> str:
        return self.key


class TemplateVersion(ProjectScopedModel):
    """Content per channel, e.g. ``{"email": {"subject", "text", "html"}, "sms": {"text"}}``.

    Once ``published_at`` is set the row never changes (a database trigger refuses updates),
    so whatever was sent can always be traced to the exact words used.
    """

    template = models.ForeignKey(Template, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.JSONField(default=dict)
    layout = models.ForeignKey(Layout, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # Strict: a variable missing at render time fails the delivery instead of rendering "".
    strict = models.BooleanField(default=False)
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["template", "number"], name="template_version_number_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.template_id}@{self.number}"

    @property
    def channels(self) -> list[str]:
        return sorted(self.content)


class Connector(ProjectScopedModel):
    """A project's account at a provider for one channel; credentials encrypted at rest."""

    class Status(models.TextChoices):
        HEALTHY = "healthy", "Healthy"
        FAILING = "failing", "Failing"

    channel = models.CharField(max_length=16, choices=Channel.choices)
    provider = models.CharField(max_length=32)
    name = models.CharField(max_length=200, blank=True, default="")
    credentials_encrypted = models.TextField(blank=True, default="")
    credentials_hint = models.CharField(max_length=16, blank=True, default="")
    settings = models.JSONField(default=dict, blank=True)
    is_default = models.BooleanField(default=False)
    secondary = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.HEALTHY)
    last_error = models.TextField(blank=True, default="")
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "channel"], condition=Q(is_default=True), name="connector_one_default_per_channel"
            )
        ]

    def __str__(self) -> str:
        return f"{self.channel}:{self.provider} ({self.name or self.pk})"

    @property
    def credentials(self) -> dict[str, Any]:
        return crypto.decrypt_json(self.credentials_encrypted) if self.credentials_encrypted else {}

    def set_credentials(self, credentials: dict[str, Any]) -> None:
        self.credentials_encrypted = crypto.encrypt_json(credentials) if credentials else ""
        secret = max((str(v) for v in credentials.values()), key=len, default="")
        self.credentials_hint = crypto.last_characters(secret)


class Delivery(ProjectScopedModel):
    class State(models.TextChoices):
        SCHEDULED = "scheduled", "Scheduled"
        QUEUED = "queued", "Queued"
        CLAIMED = "claimed", "Claimed"
        RETRYING = "retrying", "Retrying"
        SENT = "sent", "Sent"
        DELIVERED = "delivered", "Delivered"
        BOUNCED = "bounced", "Bounced"
        COMPLAINED = "complained", "Complained"
        FAILED = "failed", "Failed (dead letter)"
        SUPPRESSED = "suppressed", "Suppressed"
        OPTED_OUT = "opted_out", "Opted out"
        CANCELLED = "cancelled", "Cancelled"

    project = _hot_project_fk()
    PENDING_STATES = ("scheduled", "queued", "retrying")
    CLAIMABLE_STATES = ("queued", "retrying")

    channel = models.CharField(max_length=16, choices=Channel.choices)
    # As long as the longest address a subscriber can have: a device token (4,096).
    destination = models.CharField(max_length=4096)
    subscriber = models.ForeignKey(
        "subscribers.Subscriber",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        db_constraint=False,  # checked at enqueue; a constraint would lock each subscriber row per insert
    )
    origin_kind = models.CharField(max_length=32)
    origin_id = models.CharField(max_length=64)
    template_version = models.ForeignKey(
        TemplateVersion,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    # Pre-rendered content, for origins that send without a template (batch message APIs).
    content = models.JSONField(null=True, blank=True)
    context = models.JSONField(default=dict, blank=True)
    lane = models.CharField(max_length=8, choices=Lane.choices, default=Lane.NORMAL)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    state_reason = models.CharField(max_length=255, blank=True, default="")
    category = models.CharField(max_length=64, blank=True, default="")
    due_at = models.DateTimeField()
    attempts = models.PositiveSmallIntegerField(default=0)
    attempt_budget = models.PositiveSmallIntegerField(default=5)
    # Claims of this row whose batch never finished (its worker was killed, or something
    # escaped the per-message guard): the sweeper counts them as it takes such claims back,
    # and a row that reaches TIDINGS_POISON_AFTER_CRASHES is dead-lettered as "poison".
    # Reset once a batch records an outcome for the row. A database default, because the
    # enqueue statements name their columns.
    crashes = models.PositiveSmallIntegerField(default=0, db_default=0)
    claimed_until = models.DateTimeField(null=True, blank=True)
    # Identifies one claim; results are recorded only while the claim is still this one.
    claim_token = models.BigIntegerField(null=True, blank=True)
    delivery_key = models.CharField(max_length=255)
    # Fewer indexes and constraints on the hot table: each costs every insert of a fan-out.
    connector = models.ForeignKey(
        Connector,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    provider_reference = models.CharField(max_length=255, blank=True, default="")
    last_error = models.TextField(blank=True, default="")
    # Dead letters keep what would have been sent, so a replay or an inquiry can see it.
    payload_snapshot = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "delivery_key"], name="delivery_key_unique_per_project"),
        ]
        indexes = [
            # The claim for high/normal lanes: due order. Partial, so it holds waiting rows only.
            models.Index(
                fields=["lane", "due_at", "id"],
                condition=Q(state__in=["queued", "retrying"], lane__in=["high", "normal"]),
                name="delivery_claimable",
            ),
            # The bulk lane claims each project's share with a keyset cursor on id (campaign
            # fan-outs are id-ordered), and finds the projects with bulk work by a loose scan.
            # Each waiting row sits in exactly one of the two claim indexes: a bulk row in the
            # due-order one would let a planner walk every already-claimed entry of a campaign
            # (dead until vacuum) on each keyset claim, which made claims grow with the campaign.
            models.Index(
                fields=["project", "id"],
                condition=Q(state__in=["queued", "retrying"], lane="bulk"),
                name="delivery_bulk_claimable",
            ),
            # Rows back from a lost batch, the ones on their last chance claimed one at a time
            # from here; almost always empty.
            models.Index(
                fields=["lane", "due_at", "id"],
                condition=Q(state__in=["queued", "retrying"], crashes__gt=0),
                name="delivery_suspects",
            ),
            models.Index(fields=["claimed_until"], condition=Q(state="claimed"), name="delivery_claim_expiry"),
            models.Index(fields=["due_at"], condition=Q(state="scheduled"), name="delivery_scheduled_due"),
            models.Index(fields=["project", "origin_kind", "origin_id"], name="delivery_origin"),
            models.Index(fields=["subscriber", "id"], name="delivery_subscriber_history"),
            models.Index(fields=["project", "id"], condition=Q(state="failed"), name="delivery_dead_letters"),
            models.Index(
                fields=["project", "provider_reference"],
                condition=~Q(provider_reference=""),
                name="delivery_provider_reference",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.channel} → {self.destination} ({self.state})"


class Attempt(ProjectScopedModel):
    """One provider call. Written before the call, completed after: a row with no outcome
    is a call whose worker died (the sweeper marks it ``lost``)."""

    class Outcome(models.TextChoices):
        PENDING = "", "In flight"
        ACCEPTED = "accepted", "Accepted"
        RETRYABLE = "retryable", "Retryable"
        PERMANENT = "permanent", "Permanent"
        LOST = "lost", "Lost (worker died)"

    project = _hot_project_fk()
    delivery = models.ForeignKey(
        Delivery, on_delete=models.CASCADE, related_name="attempt_rows", db_index=False, db_constraint=False
    )
    number = models.PositiveSmallIntegerField()
    connector = models.ForeignKey(
        Connector,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, blank=True, default="")
    provider_code = models.CharField(max_length=64, blank=True, default="")
    provider_message = models.TextField(blank=True, default="")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    # What the provider answered beyond a code, when an adapter reports it (outgoing
    # webhooks: status, headers and the first KB of the body).
    response = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["delivery", "number"], name="attempt_by_delivery")]


class DeliveryEvent(ProjectScopedModel):
    """Append-only (a trigger refuses updates): every state change of a delivery.

    Metrics read from here, never from the rows workers are writing.
    """

    project = _hot_project_fk()
    delivery = models.ForeignKey(
        Delivery, on_delete=models.CASCADE, related_name="events", db_index=False, db_constraint=False
    )
    channel = models.CharField(max_length=16)
    state = models.CharField(max_length=16)
    reason = models.TextField(blank=True, default="")
    at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["delivery", "id"], name="event_by_delivery"),
            models.Index(fields=["project", "at"], name="event_by_time"),
        ]


class Suppression(ProjectScopedModel):
    class Reason(models.TextChoices):
        BOUNCE = "bounce", "Hard bounce"
        COMPLAINT = "complaint", "Complaint"
        UNSUBSCRIBE = "unsubscribe", "Unsubscribed"
        MANUAL = "manual", "Added by hand"

    channel = models.CharField(max_length=16, choices=Channel.choices)
    address = models.CharField(max_length=1024)
    reason = models.CharField(max_length=16, choices=Reason.choices)
    source = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "channel", "address"], name="suppression_unique_address_per_project"
            )
        ]

    def __str__(self) -> str:
        return f"{self.channel}:{self.address} ({self.reason})"


class Receipt(ProjectScopedModel):
    """A provider's report about a sent message, kept once per provider event id."""

    provider_event_id = models.CharField(max_length=255)
    delivery = models.ForeignKey(Delivery, null=True, blank=True, on_delete=models.SET_NULL, related_name="receipts")
    connector = models.ForeignKey(Connector, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16)
    provider_reference = models.CharField(max_length=255, blank=True, default="")
    hard_bounce = models.BooleanField(default=False)
    description = models.TextField(blank=True, default="")
    raw = models.JSONField(default=dict, blank=True)
    occurred_at = models.DateTimeField()
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "provider_event_id"], name="receipt_event_unique_per_project")
        ]
        indexes = [models.Index(fields=["delivery"], name="receipt_by_delivery")]


class SentContent(ProjectScopedModel):
    """What a sent message said, exactly as handed to the adapter: the rendered content
    JSON, zlib-compressed. Later views (a journey path, a preview) read this rather than
    re-rendering with the subscriber's fields as they are now. Kept for
    ``TIDINGS_SENT_CONTENT_RETENTION_DAYS``, then pruned by beat."""

    project = _hot_project_fk()
    delivery = models.ForeignKey(
        Delivery, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )
    created_at = models.DateTimeField()
    content = models.BinaryField()

    class Meta:
        indexes = [
            models.Index(fields=["project", "delivery"], name="sent_content_by_delivery"),
            # Rows arrive in created_at order: a BRIN range index costs nothing on the hot
            # insert and still finds the oldest pages for the pruner.
            BrinIndex(fields=["created_at"], name="sent_content_by_age"),
        ]
