from django.contrib import admin

from apps.subscribers.models import Device, ImportJob, Segment, Subscriber, Tag, TagEvent


@admin.register(Subscriber)
class SubscriberAdmin(admin.ModelAdmin):
    list_display = ("external_id", "anonymous_id", "email", "project", "merged_into", "erased_at", "created_at")
    search_fields = ("external_id", "anonymous_id", "email")
    list_filter = ("project",)
    raw_id_fields = ("merged_into",)


@admin.register(Device)
class DeviceAdmin(admin.ModelAdmin):
    list_display = ("platform", "token", "subscriber", "active", "last_seen_at")
    raw_id_fields = ("subscriber",)


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "created_at")


@admin.register(TagEvent)
class TagEventAdmin(admin.ModelAdmin):
    list_display = ("tag_name", "action", "source", "subscriber", "created_at")
    raw_id_fields = ("subscriber",)


@admin.register(Segment)
class SegmentAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "updated_at")


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("pk", "project", "status", "rows_done", "rows_total", "rows_failed", "created_at")
    list_filter = ("status",)
    readonly_fields = [f.name for f in ImportJob._meta.fields]
