"""Staff inspection of campaigns. State changes go through the lifecycle (start, pause,
cancel…), the counters belong to the dispatcher and the reconciler, and the breaker and
rate settings are validated by their service (the console's settings page), so everything
here is view-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.campaigns.models import Campaign, CampaignEvent, CampaignSettings


class ViewOnly:
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class CampaignEventInline(ViewOnly, admin.TabularInline):
    model = CampaignEvent
    fields = ("created_at", "kind", "message")
    readonly_fields = fields
    extra = 0
    ordering = ("-created_at",)


@admin.register(Campaign)
class CampaignAdmin(ViewOnly, admin.ModelAdmin):
    list_display = (
        "id",
        "name",
        "project",
        "state",
        "channel",
        "total_recipients",
        "sent",
        "delivered",
        "failed",
        "dead",
        "started_at",
        "finished_at",
    )
    list_filter = ("state", "channel", "project")
    search_fields = ("=id", "name")
    inlines = (CampaignEventInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Campaign]:
        return super().get_queryset(request).select_related("project", "stats", "template")

    def _stat(self, obj: Campaign, name: str) -> int:
        stats = getattr(obj, "stats", None)
        return max(0, int(getattr(stats, name))) if stats is not None else 0

    @admin.display(description="sent")
    def sent(self, obj: Campaign) -> int:
        return self._stat(obj, "sent")

    @admin.display(description="delivered")
    def delivered(self, obj: Campaign) -> int:
        return self._stat(obj, "delivered")

    @admin.display(description="failed attempts")
    def failed(self, obj: Campaign) -> int:
        return self._stat(obj, "failed")

    @admin.display(description="dead letters")
    def dead(self, obj: Campaign) -> int:
        return self._stat(obj, "dead")


@admin.register(CampaignSettings)
class CampaignSettingsAdmin(ViewOnly, admin.ModelAdmin):
    list_display = ("project", "bounce_threshold", "complaint_threshold", "min_rate", "max_rate", "updated_at")
