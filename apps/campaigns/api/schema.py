"""Output shapes of the campaigns API, for the published OpenAPI contract.

The views build their JSON from ``campaign_out``; these serializers describe it."""

from __future__ import annotations

from rest_framework import serializers

from apps.core import strict_fields as strict


class CampaignCountersOut(serializers.Serializer):
    total = serializers.IntegerField()
    sent = serializers.IntegerField()
    delivered = serializers.IntegerField()
    failed = serializers.IntegerField()
    retried = serializers.IntegerField()
    dead = serializers.IntegerField()
    bounced = serializers.IntegerField()
    complained = serializers.IntegerField()
    suppressed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    pending = serializers.IntegerField()
    current_rate = serializers.FloatField(help_text="Messages per second over the last sample.")
    target_rate = serializers.FloatField(help_text="The rate the AIMD controller currently allows.")
    progress = serializers.FloatField(help_text="Percent of recipients finished.")
    eta_seconds = serializers.IntegerField(allow_null=True)


class CampaignAudienceOut(serializers.Serializer):
    kind = serializers.CharField()
    segment = serializers.IntegerField(allow_null=True)
    tag = serializers.CharField()
    list_size = serializers.IntegerField()


class CampaignEventOut(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField()
    message = serializers.CharField()


class ThroughputPointOut(serializers.Serializer):
    at = serializers.DateTimeField()
    rate = serializers.FloatField()
    target = serializers.FloatField()
    sent = serializers.IntegerField()


class CampaignSummaryOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    state = serializers.CharField()
    channel = serializers.CharField()
    template = serializers.CharField()
    template_version = serializers.IntegerField(allow_null=True)
    connector = serializers.IntegerField(allow_null=True)
    audience = CampaignAudienceOut()
    send_at = serializers.DateTimeField(allow_null=True)
    max_rate = serializers.IntegerField(allow_null=True)
    initial_rate = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    pause_reason = serializers.CharField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    counters = CampaignCountersOut()


class CampaignOut(CampaignSummaryOut):
    events = CampaignEventOut(many=True)
    throughput = ThroughputPointOut(many=True)


class CampaignActionOut(CampaignOut):
    retried = serializers.IntegerField(required=False, help_text="Only for /retry: dead letters requeued.")


class CampaignListOut(serializers.Serializer):
    results = CampaignSummaryOut(many=True)


class CampaignPauseInput(serializers.Serializer):
    reason = strict.CharField(required=False, max_length=255)
