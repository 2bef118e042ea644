from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.core.errors import ApplicationError
from apps.governance.models import ApiKey, Membership
from apps.governance.services import api_key_create, api_key_revoke, api_key_rotate, validate_key_scopes


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "organization", "role", "created_at")
    list_filter = ("role", "organization")
    search_fields = ("user__username", "organization__name")


class ApiKeyAdminForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ("project", "name", "kind", "ceiling", "scopes", "rate_limit_per_minute")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("ceiling", "scopes"):
            if name in self.fields:
                self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.instance.pk is None and data.get("kind"):
            try:
                ceiling, scopes = validate_key_scopes(data["kind"], data.get("ceiling") or None, data.get("scopes"))
            except ApplicationError as exc:
                raise forms.ValidationError({exc.field if exc.field in self.fields else "kind": exc.message}) from exc
            data["ceiling"], data["scopes"] = ceiling, scopes
        return data


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    form = ApiKeyAdminForm
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
            ceiling=obj.ceiling if obj.kind == ApiKey.Kind.RESTRICTED else None,
            scopes=obj.scopes if obj.kind == ApiKey.Kind.RESTRICTED else None,
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
