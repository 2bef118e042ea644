"""Writes of the accounts app: opening an account's organization, first project and ownership."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import transaction
from django.utils.text import slugify

from apps.accounts.platform import platform_project_ensure
from apps.core.errors import ApplicationError, PermissionDenied
from apps.core.time import is_valid_timezone
from apps.governance.models import Membership, Role
from apps.projects.models import Organization
from apps.projects.services import organization_create, project_create


def _free_organization_slug(name: str) -> str:
    base = slugify(name)[:56] or "org"
    if not Organization.objects.filter(slug=base).exists():
        return base
    # Someone else's organization has this name: a short random tail keeps sign-up open
    # without telling the newcomer which names are taken.
    for _ in range(5):
        candidate = f"{base}-{secrets.token_hex(3)}"
        if not Organization.objects.filter(slug=candidate).exists():
            return candidate
    raise ApplicationError("Could not find a free address for this organization; try another name.", field="name")


@transaction.atomic
def account_open(*, user: Any, organization_name: str, project_name: str, timezone: str) -> Membership:
    """The new person's organization, its first project (in ``timezone``) and their owner
    membership, all or nothing. Raises ``ApplicationError`` naming the field."""
    organization_name, project_name, timezone = organization_name.strip(), project_name.strip(), timezone.strip()
    if not slugify(organization_name):
        raise ApplicationError("Name your organization, with letters or digits.", field="organization_name")
    if not slugify(project_name):
        raise ApplicationError("Name your first project, with letters or digits.", field="project_name")
    if not is_valid_timezone(timezone):
        raise ApplicationError(
            f"{timezone!r} is not an IANA timezone name (for example Europe/Lisbon or America/New_York).",
            code="invalid_timezone",
            field="timezone",
        )
    organization = organization_create(name=organization_name, slug=_free_organization_slug(organization_name))
    if not organization.default_timezone:
        organization.default_timezone = timezone
        organization.save(update_fields=["default_timezone"])
    project_create(organization=organization, name=project_name, timezone=timezone)
    return Membership.objects.create(user=user, organization=organization, role=Role.OWNER)


@transaction.atomic
def platform_staff_membership_ensure(*, user: Any) -> Membership:
    """Platform staff edit the account email templates in the console's template editor,
    which shows a project's templates to its organization's members: make the staff member
    an admin of the platform organization (an existing membership is left as it is)."""
    if not (user.is_authenticated and user.is_staff):
        raise PermissionDenied("Only platform staff edit the account email templates.", code="not_platform_staff")
    project = platform_project_ensure()
    membership, _ = Membership.objects.get_or_create(
        user=user, organization=project.organization, defaults={"role": Role.ADMIN}
    )
    return membership
