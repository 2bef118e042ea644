from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.governance.models import ApiKey, Membership
from apps.governance.services import api_key_create, api_key_revoke, api_key_rotate


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "organization", "role", "created_at")
    list_filter = ("role", "organization")
    search_fields = ("user__username", "organization__name")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "project", "kind", "masked", "status", "created_at", "last_used_at", "revoked_at")
    list_filter = ("kind", "project")
    search_fields = ("name", "last_four")
    fields = ("project", "name", "kind", "ceiling", "scopes", "rate_limit_per_minute")
    actions = ["revoke_keys", "rotate_keys"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> tuple[str, ...]:
        # Type, ceiling and scopes are fixed at creation: change them by issuing a new key.
        return ("project", "kind", "ceiling", "scopes") if obj else ()

    def save_model(self, request: HttpRequest, obj: ApiKey, form, change: bool) -> None:
        if change:
            obj.save(update_fields=["name", "rate_limit_per_minute"])
            return
        key, raw = api_key_create(
            project=obj.project,
            name=obj.name,
            kind=obj.kind,
            ceiling=obj.ceiling or None,
            scopes=obj.scopes or None,
            created_by=request.user,
        )
        obj.pk = key.pk
        obj.__dict__.update(ApiKey.objects.get(pk=key.pk).__dict__)
        self.message_user(request, f"New key (shown once, copy it now): {raw}", messages.WARNING)

    @admin.action(description="Revoke selected keys now")
    def revoke_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset:
            api_key_revoke(api_key=key)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")

    @admin.action(description="Rotate selected keys (old ones revoked now)")
    def rotate_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset:
            if key.is_active() and not key.replaced_by_id:
                _, raw = api_key_rotate(api_key=key, rotated_by=request.user)
                self.message_user(request, f"{key.name}: new key (shown once): {raw}", messages.WARNING)
