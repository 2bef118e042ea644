"""Reads for governance: memberships, projects a user may see, API keys."""

from __future__ import annotations

import threading
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from apps.governance.keys import hash_key
from apps.governance.models import ApiKey, Membership
from apps.projects.models import Project


def api_key_list(project: Project) -> QuerySet[ApiKey]:
    return ApiKey.objects.for_project(project).select_related("replaced_by", "created_by")


def api_key_get(project: Project, key_id: int) -> ApiKey:
    return api_key_list(project).get(pk=key_id)


# Every API call presents its key, and reading it (with its project and organization)
# was the costliest step of a small request. Per process, an active key with no end date
# is kept for TIDINGS_API_KEY_CACHE_SECONDS. A key with a revocation time (rotated with a
# grace period) is always read afresh, and any save of a key, project or organization in
# this process forgets every entry (apps.governance.apps), so a revocation made here takes
# effect at once and one made in another process within the TTL.
_keys_by_hash: dict[str, tuple[float, ApiKey]] = {}
_keys_lock = threading.Lock()
_MAX_CACHED_KEYS = 10_000


def api_key_cache_clear() -> None:
    with _keys_lock:
        _keys_by_hash.clear()


def _copy(instance: Any) -> Any:
    # What copy.copy does for a model (its __getstate__ copies the state and the related
    # objects cache), without the pickle protocol's detour.
    own = instance.__class__.__new__(instance.__class__)
    own.__dict__.update(instance.__getstate__())
    return own


def _own_copy(key: ApiKey) -> ApiKey:
    # Requests run in parallel threads: each gets its own instances, so nothing one view
    # sets on its key or project is seen by another request.
    own = _copy(key)
    own.project = _copy(key.project)
    return own


def api_key_by_raw(raw: str) -> ApiKey | None:
    digest = hash_key(raw)
    now = time.monotonic()
    hit = _keys_by_hash.get(digest)
    if hit is not None and hit[0] > now:
        return _own_copy(hit[1])
    key = ApiKey.objects.select_related("project__organization").filter(key_hash=digest).first()
    ttl = float(getattr(settings, "TIDINGS_API_KEY_CACHE_SECONDS", 5))
    if key is not None and key.revoked_at is None and ttl > 0:
        with _keys_lock:
            if len(_keys_by_hash) >= _MAX_CACHED_KEYS:
                _keys_by_hash.clear()
            _keys_by_hash[digest] = (now + ttl, key)
        return _own_copy(key)
    return key


def projects_for_user(user: AbstractBaseUser) -> QuerySet[Project]:
    return Project.objects.filter(organization__memberships__user=user).select_related("organization")


def membership_for_project(user: AbstractBaseUser, project: Project) -> Membership | None:
    return Membership.objects.filter(user=user, organization_id=project.organization_id).first()
