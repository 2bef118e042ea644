from django.contrib import admin

from apps.core.models import Heartbeat, IdempotencyRecord


@admin.register(Heartbeat)
class HeartbeatAdmin(admin.ModelAdmin):
    list_display = ("name", "at")


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    list_display = ("key", "project", "state", "response_status", "created_at", "expires_at")
    list_filter = ("state",)
    search_fields = ("key",)
    readonly_fields = [f.name for f in IdempotencyRecord._meta.fields]
