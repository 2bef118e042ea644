from __future__ import annotations

from django.contrib import admin

from apps.notifications.models import Broadcast, Notification, OutboxEvent


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "template_key", "template_number", "priority", "state", "created_at")
    list_filter = ("state", "priority")
    search_fields = ("=id", "template_key")
    readonly_fields = [f.name for f in Notification._meta.fields]
    list_select_related = ("project",)


@admin.register(OutboxEvent)
class OutboxEventAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "notification_id", "lane", "created_at", "relayed_at", "relay_attempts")
    list_filter = ("lane",)
    readonly_fields = [f.name for f in OutboxEvent._meta.fields]


@admin.register(Broadcast)
class BroadcastAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "template_key", "audience_kind", "audience_ref", "state", "created_at")
    list_filter = ("state", "audience_kind")
    readonly_fields = [f.name for f in Broadcast._meta.fields]
