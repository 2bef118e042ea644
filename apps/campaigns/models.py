"""Campaigns: one frozen template version sent to a whole audience through the bulk lane.

The Delivery ledger (apps.delivery) holds one row per recipient and is the truth; the rows
here describe the campaign, its fan-out chunks, its live counters (corrected by the
reconciler) and what happened to it.
"""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from apps.core.models import ProjectScopedModel


class CampaignState(models.TextChoices):
    DRAFT = "draft", "Draft"
    SCHEDULED = "scheduled", "Scheduled"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    COMPLETED = "completed", "Completed"
    CANCELLED = "cancelled", "Cancelled"


TERMINAL_STATES = frozenset({CampaignState.COMPLETED, CampaignState.CANCELLED})


class AudienceKind(models.TextChoices):
    EVERYONE = "everyone", "Everyone"
    SEGMENT = "segment", "Segment"
    TAG = "tag", "Tag"
    LIST = "list", "Uploaded list"


class Campaign(ProjectScopedModel):
    name = models.CharField(max_length=200)
    state = models.CharField(max_length=16, choices=CampaignState.choices, default=CampaignState.DRAFT)
    channel = models.CharField(max_length=16, default="email")
    category = models.CharField(max_length=64, blank=True, default="marketing")

    # The template chosen while editing; the exact version is frozen when the campaign
    # starts, so editing the template mid-send never changes what recipients get.
    template = models.ForeignKey("delivery.Template", on_delete=models.PROTECT, related_name="+")
    template_version = models.ForeignKey(
        "delivery.TemplateVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    connector = models.ForeignKey(
        "delivery.Connector", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    audience_kind = models.CharField(max_length=16, choices=AudienceKind.choices, default=AudienceKind.EVERYONE)
    audience_segment = models.ForeignKey(
        "subscribers.Segment", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    audience_tag = models.CharField(max_length=64, blank=True, default="")
    # Uploaded list: subscriber external ids.
    audience_list = models.JSONField(default=list, blank=True)

    send_at = models.DateTimeField(null=True, blank=True)
    # Ceiling for the AIMD controller on this campaign's provider account (messages/s);
    # null means the project setting.
    max_rate = models.PositiveIntegerField(null=True, blank=True)
    initial_rate = models.PositiveIntegerField(null=True, blank=True)

    total_recipients = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    pause_reason = models.CharField(max_length=500, blank=True, default="")
    # The breaker only judges receipts for sends after this moment (reset on resume).
    breaker_since = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    paused_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["project", "state"], name="campaign_project_state")]

    def __str__(self) -> str:
        return self.name

    @property
    def origin_id(self) -> str:
        return str(self.pk)

    @property
    def key_prefix(self) -> str:
        return f"campaign:{self.pk}"

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES


class CampaignChunk(ProjectScopedModel):
    """One id range of the audience. Fan-out is one Celery message per chunk, never per
    recipient; a chunk is marked done in the transaction that inserts its deliveries,
    so a lost or repeated chunk message is harmless (the reaper re-queues lost ones)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="chunks")
    lo = models.BigIntegerField()
    hi = models.BigIntegerField(help_text="Exclusive upper subscriber id.")
    done = models.BooleanField(default=False)
    enqueued = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField()
    done_at = models.DateTimeField(null=True, blank=True)
    # Claims taken in their own committed transaction before the chunk runs: a worker that
    # dies mid-chunk leaves the count behind, which is how a chunk that kills its worker
    # every time is recognised (TIDINGS_POISON_AFTER_CRASHES) and skipped as "poison".
    crashes = models.PositiveSmallIntegerField(default=0)
    # Why the chunk, or some of its recipients, were not queued: "poison", or the error.
    failure_reason = models.CharField(max_length=500, blank=True, default="")
    failed_recipients = models.PositiveIntegerField(default=0)
    failures = models.JSONField(default=list, blank=True, help_text="[{subscriber_id, reason}], capped.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "lo"], name="campaign_chunk_unique_lo")]
        indexes = [models.Index(fields=["campaign", "done"], name="campaign_chunk_pending")]


class CampaignStats(ProjectScopedModel):
    """Live counters. Updated in the dispatcher's transaction by the origin listener, and
    corrected by the reconciler, which counts the ledger rows. Plain integers, no CHECK:
    a counter must never be able to fail the dispatcher transaction that moves it."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="stats")
    total = models.BigIntegerField(default=0)
    sent = models.BigIntegerField(default=0)
    delivered = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    retried = models.BigIntegerField(default=0)
    dead = models.BigIntegerField(default=0)
    bounced = models.BigIntegerField(default=0)
    complained = models.BigIntegerField(default=0)
    suppressed = models.BigIntegerField(default=0)
    cancelled = models.BigIntegerField(default=0)
    pending = models.BigIntegerField(default=0)
    current_rate = models.FloatField(default=0)
    target_rate = models.FloatField(default=0)
    updated_at = models.DateTimeField(auto_now=True)


class CampaignEvent(ProjectScopedModel):
    """What happened to a campaign, newest last: state changes, breaker trips, AIMD moves,
    reconciler corrections. Append-only."""

    class Kind(models.TextChoices):
        STATE = "state", "State"
        FANOUT = "fanout", "Fan-out"
        BREAKER = "breaker", "Breaker"
        RATE = "rate", "Rate"
        RECONCILE = "reconcile", "Reconcile"
        REAPER = "reaper", "Reaper"
        RETRY = "retry", "Retry"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    message = models.CharField(max_length=500)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["campaign", "-id"], name="campaign_event_recent")]


class CampaignSample(ProjectScopedModel):
    """A point of the throughput chart: cumulative counters and the rates at that moment.
    The breaker's sliding window is the difference between now and a sample one window ago."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="samples")
    at = models.DateTimeField()
    sent = models.BigIntegerField()
    delivered = models.BigIntegerField(default=0)
    bounced = models.BigIntegerField(default=0)
    complained = models.BigIntegerField(default=0)
    rate = models.FloatField()
    target_rate = models.FloatField(default=0)

    class Meta:
        indexes = [models.Index(fields=["campaign", "at"], name="campaign_sample_at")]


def _fraction(low: str, high: str) -> list:
    return [MinValueValidator(Decimal(low)), MaxValueValidator(Decimal(high))]


class CampaignSettings(ProjectScopedModel):
    """Per-project reputation thresholds and rate-control tuning (a row per project;
    missing means the defaults)."""

    bounce_threshold = models.DecimalField(
        max_digits=6, decimal_places=5, default=Decimal("0.05"), validators=_fraction("0.001", "0.5")
    )
    complaint_threshold = models.DecimalField(
        max_digits=6, decimal_places=5, default=Decimal("0.001"), validators=_fraction("0.0001", "0.1")
    )
    window_seconds = models.PositiveIntegerField(
        default=300, validators=[MinValueValidator(30), MaxValueValidator(86400)]
    )
    # A rate over a handful of receipts means nothing; the breaker waits for this many.
    min_sample = models.PositiveIntegerField(default=200, validators=[MinValueValidator(10)])
    min_rate = models.PositiveIntegerField(default=10, validators=[MinValueValidator(1)])
    max_rate = models.PositiveIntegerField(default=20000, validators=[MinValueValidator(1)])
    initial_rate = models.PositiveIntegerField(default=1000, validators=[MinValueValidator(1)])
    increase_step = models.PositiveIntegerField(default=200, validators=[MinValueValidator(1)])
    decrease_factor = models.DecimalField(
        max_digits=3, decimal_places=2, default=Decimal("0.5"), validators=_fraction("0.1", "0.95")
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project"], name="campaign_settings_one_per_project"),
            models.CheckConstraint(
                condition=Q(bounce_threshold__gt=0) & Q(bounce_threshold__lte=Decimal("0.5")),
                name="campaign_settings_bounce_in_range",
            ),
            models.CheckConstraint(
                condition=Q(complaint_threshold__gt=0) & Q(complaint_threshold__lte=Decimal("0.1")),
                name="campaign_settings_complaint_in_range",
            ),
        ]
