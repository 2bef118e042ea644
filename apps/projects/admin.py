from django.contrib import admin

from apps.projects.models import Organization, Project


class ProjectInline(admin.TabularInline):
    model = Project
    extra = 0


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_at")
    search_fields = ("name", "slug")
    inlines = [ProjectInline]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "organization", "timezone", "created_at")
    list_filter = ("organization",)
    search_fields = ("name", "slug")
