"""Reads for governance: memberships, projects a user may see, API keys."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from apps.governance.keys import hash_key
from apps.governance.models import ApiKey, Membership
from apps.projects.models import Project


def api_key_list(project: Project) -> QuerySet[ApiKey]:
    return ApiKey.objects.for_project(project).select_related("replaced_by", "created_by")


def api_key_get(project: Project, key_id: int) -> ApiKey:
    return api_key_list(project).get(pk=key_id)


def api_key_by_raw(raw: str) -> ApiKey | None:
    return ApiKey.objects.select_related("project__organization").filter(key_hash=hash_key(raw)).first()


def projects_for_user(user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(organization__memberships__user=user).select_related("organization")


def membership_for_project(user: AbstractBaseUser, project: Project) -> Membership | None:
    return Membership.objects.filter(user=user, organization_id=project.organization_id).first()
