"""Input shapes and output documents for the subscribers API. Rules live in services."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.core import strict_fields as strict
from apps.core.query import QueryParameters
from apps.subscribers.models import Channel, Device, ImportJob, Segment, Subscriber, TagEvent
from apps.subscribers.validation import TAGS_PER_REQUEST, TAGS_PER_SUBSCRIBER

SUBSCRIBER_HASH_HELP = (
    "Public keys only: proof that the app acts for this external_id, required to change a subscriber "
    "that already exists with an external id. The lowercase hex HMAC-SHA256 of the external_id (UTF-8) "
    "keyed with the project's identity-verification secret (console, API keys page), computed by your "
    "server and handed to your app. Secret keys need none."
)


def subscriber_hash_field() -> serializers.CharField:
    return strict.CharField(max_length=128, required=False, help_text=SUBSCRIBER_HASH_HELP)


def _hash_needs_external_id(attrs: dict[str, Any]) -> None:
    if attrs.get("subscriber_hash") and not attrs.get("external_id"):
        raise serializers.ValidationError({"subscriber_hash": "A subscriber_hash goes with the external_id it signs."})


class IdentifyIn(serializers.Serializer):
    external_id = strict.CharField(max_length=255, required=False, allow_null=True)
    anonymous_id = strict.CharField(max_length=255, required=False, allow_null=True)
    email = strict.CharField(max_length=254, required=False, allow_blank=True)
    phone = strict.CharField(max_length=32, required=False, allow_blank=True)
    timezone = strict.CharField(max_length=64, required=False, allow_blank=True)
    locale = strict.CharField(max_length=35, required=False, allow_blank=True)
    attributes = serializers.DictField(required=False)
    subscriber_hash = subscriber_hash_field()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("external_id") and not attrs.get("anonymous_id"):
            raise serializers.ValidationError({"external_id": "Send an external_id, an anonymous_id, or both."})
        _hash_needs_external_id(attrs)
        return attrs


class PreferenceIn(serializers.Serializer):
    channel = strict.CharField()
    category = strict.CharField(required=False, allow_blank=True, default="")
    opted_out = strict.BooleanField()


class SubscriberPatchIn(serializers.Serializer):
    email = strict.CharField(max_length=254, required=False, allow_blank=True)
    phone = strict.CharField(max_length=32, required=False, allow_blank=True)
    timezone = strict.CharField(max_length=64, required=False, allow_blank=True)
    locale = strict.CharField(max_length=35, required=False, allow_blank=True)
    attributes = serializers.DictField(required=False)
    preferences = PreferenceIn(many=True, required=False)


def _tag_names(verb: str) -> serializers.ListField:
    return serializers.ListField(
        child=strict.CharField(trim_whitespace=False, allow_blank=True),
        default=list,
        max_length=TAGS_PER_REQUEST,
        help_text=(
            f"Tag names to {verb}, at most {TAGS_PER_REQUEST}. A subscriber holds at most "
            f"{TAGS_PER_SUBSCRIBER} tags (422 too_many_tags beyond)."
        ),
    )


class TagsIn(serializers.Serializer):
    add = _tag_names("add")
    remove = _tag_names("remove")
    subscriber_hash = subscriber_hash_field()


class TagsQuery(QueryParameters):
    id_type = serializers.ChoiceField(
        choices=[("external", "external"), ("anonymous", "anonymous")],
        default="external",
        help_text=(
            "What the path names: the subscriber's external id (default), or the anonymous id an app "
            "gave a visitor before login; the tags follow the visitor when identify merges them."
        ),
    )


class DeviceIn(serializers.Serializer):
    external_id = strict.CharField(max_length=255, required=False, allow_null=True)
    anonymous_id = strict.CharField(
        max_length=255,
        required=False,
        allow_null=True,
        help_text="A visitor's anonymous id: the device follows them when identify merges them.",
    )
    platform = serializers.ChoiceField(choices=Device.Platform.choices)
    token = strict.CharField(max_length=4096)
    subscriber_hash = subscriber_hash_field()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("external_id") and not attrs.get("anonymous_id"):
            raise serializers.ValidationError({"external_id": "Send the external_id or anonymous_id of the owner."})
        _hash_needs_external_id(attrs)
        return attrs


class SegmentIn(serializers.Serializer):
    name = strict.CharField(max_length=200)
    rules = strict.JSONObjectField()


class SegmentPatchIn(serializers.Serializer):
    name = strict.CharField(max_length=200, required=False)
    rules = strict.JSONObjectField(required=False)


class PageQuery(QueryParameters):
    cursor = strict.CharField(required=False, help_text="The next_cursor of the previous page.")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500, default=50)


class ListQuery(PageQuery):
    tag = strict.CharField(required=False, help_text="Only subscribers carrying this tag.")
    segment = serializers.IntegerField(required=False, help_text="Only members of this segment (id).")
    email = strict.CharField(required=False, help_text="Exact email address.")
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)


class ImportUploadIn(serializers.Serializer):
    """The multipart form of an import upload (documentation: the view streams the part)."""

    file = serializers.FileField(help_text="A CSV (with a header row) or NDJSON file.")


# --- Output documents --------------------------------------------------------------------
# These describe, for the OpenAPI contract, the JSON the *_out functions below build; the
# views never serialize through them (the functions are cheaper and already exact).


NEXT_CURSOR_HELP = "Pass as ?cursor= for the next page; null at the end."


class SegmentRefOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = strict.CharField()


class PreferenceOut(serializers.Serializer):
    channel = serializers.ChoiceField(choices=Channel.choices)
    category = strict.CharField(allow_blank=True)
    opted_out = serializers.BooleanField()


class DeviceOut(serializers.Serializer):
    platform = serializers.ChoiceField(choices=Device.Platform.choices)
    token = strict.CharField()
    active = serializers.BooleanField()
    last_seen_at = serializers.DateTimeField(allow_null=True)


class DeviceOwnerOut(serializers.Serializer):
    external_id = strict.CharField(allow_null=True)
    anonymous_id = strict.CharField(allow_null=True)


class DeviceRegisteredOut(DeviceOut):
    subscriber = DeviceOwnerOut()


class SubscriberOut(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = strict.CharField(allow_null=True)
    anonymous_id = strict.CharField(allow_null=True)
    email = strict.CharField(allow_blank=True)
    phone = strict.CharField(allow_blank=True)
    timezone = strict.CharField(allow_blank=True)
    locale = strict.CharField(allow_blank=True)
    attributes = serializers.DictField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class SubscriberTaggedOut(SubscriberOut):
    tags = serializers.ListField(child=strict.CharField())


class IdentifyOut(serializers.Serializer):
    """Keys with ``read`` get the whole profile; other keys (every public key) get only
    the subscriber's id and the ids they sent."""

    id = serializers.IntegerField()
    external_id = strict.CharField(allow_null=True)
    anonymous_id = strict.CharField(allow_null=True)
    email = strict.CharField(allow_blank=True, required=False)
    phone = strict.CharField(allow_blank=True, required=False)
    timezone = strict.CharField(allow_blank=True, required=False)
    locale = strict.CharField(allow_blank=True, required=False)
    attributes = serializers.DictField(required=False)
    created_at = serializers.DateTimeField(required=False)
    updated_at = serializers.DateTimeField(required=False)
    tags = serializers.ListField(child=strict.CharField(), required=False)


class SubscriberDetailOut(SubscriberTaggedOut):
    devices = DeviceOut(many=True)
    segments = SegmentRefOut(many=True)
    preferences = PreferenceOut(many=True)


class SubscriberPageOut(serializers.Serializer):
    results = SubscriberTaggedOut(many=True)
    next_cursor = strict.CharField(allow_null=True, help_text=NEXT_CURSOR_HELP)


class SegmentMembersPageOut(serializers.Serializer):
    results = SubscriberOut(many=True)
    next_cursor = strict.CharField(allow_null=True, help_text=NEXT_CURSOR_HELP)


class TagsOut(serializers.Serializer):
    tags = serializers.ListField(child=strict.CharField())
    segments = SegmentRefOut(many=True, help_text="The segments the subscriber is in after the change.")


class TagEventOut(serializers.Serializer):
    tag = strict.CharField()
    action = serializers.ChoiceField(choices=TagEvent.Action.choices)
    source = serializers.ChoiceField(choices=TagEvent.Source.choices)
    at = serializers.DateTimeField()


class ExportDeviceOut(serializers.Serializer):
    platform = serializers.ChoiceField(choices=Device.Platform.choices)
    token = strict.CharField()
    active = serializers.BooleanField()
    created_at = serializers.DateTimeField()


class SubscriberExportOut(serializers.Serializer):
    external_id = strict.CharField(allow_null=True)
    anonymous_ids = serializers.ListField(child=strict.CharField())
    email = strict.CharField(allow_blank=True)
    phone = strict.CharField(allow_blank=True)
    timezone = strict.CharField(allow_blank=True)
    locale = strict.CharField(allow_blank=True)
    attributes = serializers.DictField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    tags = serializers.ListField(child=strict.CharField())
    tag_events = TagEventOut(many=True)
    devices = ExportDeviceOut(many=True)
    segments = serializers.ListField(child=strict.CharField(), help_text="Segment names.")
    preferences = PreferenceOut(many=True)


class SegmentOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = strict.CharField()
    rules = strict.JSONObjectField()
    count = serializers.IntegerField(help_text="Current number of members.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class SegmentListOut(serializers.Serializer):
    results = SegmentOut(many=True)


class ImportRowErrorOut(serializers.Serializer):
    line = serializers.IntegerField()
    message = strict.CharField()


class ImportJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=ImportJob.Status.choices)
    format = serializers.ChoiceField(choices=ImportJob.Format.choices)
    file_name = strict.CharField(allow_blank=True)
    size_bytes = serializers.IntegerField()
    rows_total = serializers.IntegerField(allow_null=True)
    rows_done = serializers.IntegerField()
    rows_imported = serializers.IntegerField()
    rows_failed = serializers.IntegerField()
    errors = ImportRowErrorOut(many=True, help_text="Rejected rows, by line; at most 1000.")
    errors_truncated = serializers.BooleanField()
    error = strict.CharField(allow_null=True, help_text="Why the whole job failed, if it did.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


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


def subscriber_ids_out(s: Subscriber, *, external_id: str | None, anonymous_id: str | None) -> dict[str, Any]:
    """What a key without ``read`` learns: the row's id and only the ids it sent (an
    anonymous id merged into someone must not reveal their external id)."""
    return {
        "id": s.pk,
        "external_id": external_id if external_id == s.external_id else None,
        "anonymous_id": anonymous_id or None,
    }


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
