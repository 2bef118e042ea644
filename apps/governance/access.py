"""The one check: may this actor do this, here?

``can(actor, permission, obj)`` is what every console view, console action, admin action
and API view asks. ``obj`` is the organization, the project, or a project-owned object the
action is about; another organization's object is never allowed.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from apps.governance.catalogue import BUILT_IN_PERMISSIONS, BY_CODE
from apps.governance.models import Membership
from apps.projects.models import Organization, Project


def membership_permissions(membership: Membership) -> frozenset[str]:
    """The catalogue permissions a membership holds through its role."""
    if membership.custom_role_id is not None:
        return frozenset(membership.custom_role.permissions) & frozenset(BY_CODE)
    return BUILT_IN_PERMISSIONS.get(membership.role, frozenset())


def organization_of(obj: Any) -> int | None:
    if isinstance(obj, Organization):
        return obj.pk
    if isinstance(obj, Project):
        return obj.organization_id
    project = getattr(obj, "project", None)
    if isinstance(project, Project):
        return project.organization_id
    return getattr(obj, "organization_id", None)


def can(actor: AbstractBaseUser | AnonymousUser | None, permission: str, obj: Any) -> bool:
    if permission not in BY_CODE:
        raise ValueError(f"{permission!r} is not in the permission catalogue")
    if actor is None or not actor.is_authenticated:
        return False
    organization_id = organization_of(obj)
    if organization_id is None:
        return False
    membership = (
        Membership.objects.select_related("custom_role").filter(user=actor, organization_id=organization_id).first()
    )
    return membership is not None and permission in membership_permissions(membership)
