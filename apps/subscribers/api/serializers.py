"""Input shapes and output documents for the subscribers API. Rules live in services."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.subscribers.models import Device, ImportJob, Segment, Subscriber


class IdentifyIn(serializers.Serializer):
    external_id = serializers.CharField(max_length=255, required=False, allow_null=True)
    anonymous_id = serializers.CharField(max_length=255, required=False, allow_null=True)
    email = serializers.CharField(max_length=254, required=False, allow_blank=True)
    phone = serializers.CharField(max_length=32, required=False, allow_blank=True)
    timezone = serializers.CharField(max_length=64, required=False, allow_blank=True)
    locale = serializers.CharField(max_length=35, required=False, allow_blank=True)
    attributes = serializers.DictField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("external_id") and not attrs.get("anonymous_id"):
            raise serializers.ValidationError({"external_id": "Send an external_id, an anonymous_id, or both."})
        return attrs


class PreferenceIn(serializers.Serializer):
    channel = serializers.CharField()
    category = serializers.CharField(required=False, allow_blank=True, default="")
    opted_out = serializers.BooleanField()


class SubscriberPatchIn(serializers.Serializer):
    email = serializers.CharField(max_length=254, required=False, allow_blank=True)
    phone = serializers.CharField(max_length=32, required=False, allow_blank=True)
    timezone = serializers.CharField(max_length=64, required=False, allow_blank=True)
    locale = serializers.CharField(max_length=35, required=False, allow_blank=True)
    attributes = serializers.DictField(required=False)
    preferences = PreferenceIn(many=True, required=False)


class TagsIn(serializers.Serializer):
    add = serializers.ListField(child=serializers.CharField(trim_whitespace=False, allow_blank=True), default=list)
    remove = serializers.ListField(child=serializers.CharField(trim_whitespace=False, allow_blank=True), default=list)


class DeviceIn(serializers.Serializer):
    external_id = serializers.CharField(max_length=255, required=False, allow_null=True)
    anonymous_id = serializers.CharField(max_length=255, required=False, allow_null=True)
    platform = serializers.CharField()
    token = serializers.CharField(max_length=4096)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("external_id") and not attrs.get("anonymous_id"):
            raise serializers.ValidationError({"external_id": "Send the external_id or anonymous_id of the owner."})
        return attrs


class SegmentIn(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    rules = serializers.JSONField()


class SegmentPatchIn(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    rules = serializers.JSONField(required=False)


class ListQuery(serializers.Serializer):
    tag = serializers.CharField(required=False)
    segment = serializers.IntegerField(required=False)
    email = serializers.CharField(required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    cursor = serializers.CharField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500, default=50)


def subscriber_out(s: Subscriber, tags: set[str] | None = None) -> dict[str, Any]:
    body = {
        "id": s.pk,
        "external_id": s.external_id,
        "anonymous_id": s.anonymous_id,
        "email": s.email,
        "phone": s.phone,
        "timezone": s.timezone,
        "locale": s.locale,
        "attributes": s.attributes,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
    }
    if tags is not None:
        body["tags"] = sorted(tags)
    return body


def device_out(d: Device) -> dict[str, Any]:
    return {"platform": d.platform, "token": d.token, "active": d.active, "last_seen_at": d.last_seen_at}


def segment_out(s: Segment, count: int) -> dict[str, Any]:
    return {
        "id": s.pk,
        "name": s.name,
        "rules": s.rules,
        "count": count,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
    }


def import_out(job: ImportJob) -> dict[str, Any]:
    return {
        "id": job.pk,
        "status": job.status,
        "format": job.format,
        "file_name": job.original_name,
        "size_bytes": job.size_bytes,
        "rows_total": job.rows_total,
        "rows_done": job.rows_done,
        "rows_imported": job.rows_imported,
        "rows_failed": job.rows_failed,
        "errors": sorted(job.errors, key=lambda e: e["line"])[:1000],
        "errors_truncated": job.rows_failed > len(job.errors),
        "error": job.error or None,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }
