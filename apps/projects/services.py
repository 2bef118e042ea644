"""Writes for organizations and projects."""

from __future__ import annotations

from django.db import transaction
from django.utils.text import slugify

from apps.core.errors import ApplicationError
from apps.core.time import is_valid_timezone
from apps.projects.models import Organization, Project


@transaction.atomic
def organization_create(*, name: str, slug: str | None = None) -> Organization:
    slug = slug or slugify(name)[:64]
    if not slug:
        raise ApplicationError("An organization needs a name with letters or digits.", field="name")
    if Organization.objects.filter(slug=slug).exists():
        raise ApplicationError(f"Organization slug {slug!r} is taken.", code="slug_taken", field="slug")
    return Organization.objects.create(name=name, slug=slug)


@transaction.atomic
def project_create(*, organization: Organization, name: str, slug: str | None = None, timezone: str = "") -> Project:
    slug = slug or slugify(name)[:64]
    if not slug:
        raise ApplicationError("A project needs a name with letters or digits.", field="name")
    if timezone and not is_valid_timezone(timezone):
        raise ApplicationError(f"{timezone!r} is not an IANA timezone.", code="invalid_timezone", field="timezone")
    if Project.objects.filter(organization=organization, slug=slug).exists():
        raise ApplicationError(f"Project slug {slug!r} is taken in this organization.", code="slug_taken", field="slug")
    return Project.objects.create(organization=organization, name=name, slug=slug, timezone=timezone)


@transaction.atomic
def project_update(*, project: Project, name: str | None = None, timezone: str | None = None) -> Project:
    if timezone is not None:
        if timezone and not is_valid_timezone(timezone):
            raise ApplicationError(f"{timezone!r} is not an IANA timezone.", code="invalid_timezone", field="timezone")
        project.timezone = timezone
    if name is not None:
        project.name = name
    project.save()
    return project
