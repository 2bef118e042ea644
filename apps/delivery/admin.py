"""Staff inspection of the ledger. Read-mostly: writes go through the services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from apps.delivery.models import (
    Attempt,
    Connector,
    Delivery,
    DeliveryEvent,
    Layout,
    Receipt,
    Suppression,
    Template,
    TemplateVersion,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """The ledger is written by the dispatcher; staff look, never edit."""

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ("id", "project", "channel", "destination", "lane", "state", "attempts", "due_at", "origin_kind")
    list_filter = ("state", "channel", "lane")
    search_fields = ("=id", "delivery_key", "destination", "provider_reference")
    show_full_result_count = False  # counting millions of rows on every page is not worth it


@admin.register(Attempt)
class AttemptAdmin(ReadOnlyAdmin):
    list_display = ("id", "delivery_id", "number", "outcome", "provider_code", "latency_ms", "started_at")
    search_fields = ("=delivery__id",)
    show_full_result_count = False


@admin.register(DeliveryEvent)
class DeliveryEventAdmin(ReadOnlyAdmin):
    list_display = ("id", "delivery_id", "channel", "state", "reason", "at")
    search_fields = ("=delivery__id",)
    show_full_result_count = False


@admin.register(Receipt)
class ReceiptAdmin(ReadOnlyAdmin):
    list_display = ("provider_event_id", "project", "delivery_id", "status", "hard_bounce", "occurred_at")
    search_fields = ("provider_event_id", "provider_reference")


@admin.register(Suppression)
class SuppressionAdmin(admin.ModelAdmin):
    list_display = ("address", "channel", "reason", "project", "created_at")
    list_filter = ("channel", "reason")
    search_fields = ("address",)


@admin.register(Connector)
class ConnectorAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "channel", "provider", "name", "is_default", "status", "credentials_hint")
    list_filter = ("channel", "provider", "status")
    exclude = ("credentials_encrypted",)  # never shown again after saving
    readonly_fields = ("credentials_hint",)


@admin.register(Template)
class TemplateAdmin(admin.ModelAdmin):
    list_display = ("key", "project", "channel", "name", "updated_at")
    search_fields = ("key", "name")


@admin.register(TemplateVersion)
class TemplateVersionAdmin(ReadOnlyAdmin):
    list_display = ("template", "number", "strict", "published_at")


@admin.register(Layout)
class LayoutAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "updated_at")
