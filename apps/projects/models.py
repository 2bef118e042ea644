"""The tenant root: organizations own projects; a project is the tenant boundary."""

from __future__ import annotations

from django.db import models

from apps.core.time import validate_timezone


class Organization(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    # Members without a second factor are sent to set one up at their next sign-in.
    mfa_required = models.BooleanField(default=False)
    default_timezone = models.CharField(
        max_length=64,
        blank=True,
        default="",
        validators=[validate_timezone],
        help_text="IANA timezone offered to new projects.",
    )
    audit_retention_days = models.PositiveIntegerField(default=365)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Project(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64)
    timezone = models.CharField(
        max_length=64,
        blank=True,
        default="",
        validators=[validate_timezone],
        help_text="IANA timezone used for waits when a subscriber has none.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organization__name", "name"]
        constraints = [models.UniqueConstraint(fields=["organization", "slug"], name="project_slug_unique_per_org")]

    def __str__(self) -> str:
        return f"{self.organization.slug}/{self.slug}"
