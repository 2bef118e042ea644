"""Writes for memberships and API keys."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.governance.keys import generate_raw_key, hash_key, looks_like_key
from apps.governance.models import ApiKey, Membership, Role
from apps.governance.scopes import ALL_SCOPES, CEILINGS
from apps.projects.models import Organization, Project

MAX_GRACE = timedelta(days=30)
LAST_USED_RESOLUTION_SECONDS = 60


@transaction.atomic
def membership_set(*, user: AbstractBaseUser, organization: Organization, role: str) -> Membership:
    if role not in Role.values:
        raise ApplicationError(f"Unknown role {role!r}; use one of {', '.join(Role.values)}.", field="role")
    membership, _ = Membership.objects.update_or_create(user=user, organization=organization, defaults={"role": role})
    return membership


def validate_key_scopes(kind: str, ceiling: str | None, scopes: Iterable[str] | None) -> tuple[str, list[str]]:
    if kind not in ApiKey.Kind.values:
        raise ApplicationError(f"Unknown key type {kind!r}; use public, secret or restricted.", field="kind")
    if kind != ApiKey.Kind.RESTRICTED:
        if scopes:
            raise ApplicationError("Only restricted keys take an explicit scope list.", field="scopes")
        return kind, sorted(CEILINGS[kind])
    if ceiling not in CEILINGS:
        raise ApplicationError("A restricted key needs a ceiling: public or secret.", field="ceiling")
    chosen = list(dict.fromkeys(scopes or []))
    if not chosen:
        raise ApplicationError("A restricted key needs at least one scope.", field="scopes")
    unknown = [s for s in chosen if s not in ALL_SCOPES]
    if unknown:
        raise ApplicationError(f"Unknown scope {unknown[0]!r}.", code="unknown_scope", field="scopes")
    outside = [s for s in chosen if s not in CEILINGS[ceiling]]
    if outside:
        raise ApplicationError(
            f"Scope {outside[0]!r} is not within the {ceiling} ceiling.", code="scope_outside_ceiling", field="scopes"
        )
    return ceiling, sorted(chosen)


@transaction.atomic
def api_key_create(
    *,
    project: Project,
    name: str,
    kind: str,
    scopes: Iterable[str] | None = None,
    ceiling: str | None = None,
    created_by: AbstractBaseUser | None = None,
    raw_key: str | None = None,
) -> tuple[ApiKey, str]:
    """Create a key and return it with its raw value, which is never shown again."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise ApplicationError("A key needs a name of 1 to 100 characters.", field="name")
    ceiling, scope_list = validate_key_scopes(kind, ceiling, scopes)
    prefix = ApiKey.PREFIXES[ApiKey.Kind(kind)]
    raw = raw_key or generate_raw_key(prefix)
    if not raw.startswith(prefix) or not looks_like_key(raw):
        raise ApplicationError("Malformed key material.", field="raw_key")
    key = ApiKey.objects.create(
        project=project,
        name=name,
        kind=kind,
        ceiling=ceiling,
        scopes=scope_list,
        key_hash=hash_key(raw),
        display_prefix=raw[:7],
        last_four=raw[-4:],
        created_by=created_by,
    )
    return key, raw


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    key = ApiKey.objects.select_for_update().get(pk=api_key.pk)
    now = timezone.now()
    if key.revoked_at is None or key.revoked_at > now:
        key.revoked_at = now
        key.save(update_fields=["revoked_at"])
    return key


@transaction.atomic
def api_key_rotate(
    *, api_key: ApiKey, grace: timedelta = timedelta(0), rotated_by: AbstractBaseUser | None = None
) -> tuple[ApiKey, str]:
    """Issue a replacement with the same type and scopes; the old key ends now or after ``grace``."""
    if grace < timedelta(0) or grace > MAX_GRACE:
        raise ApplicationError("The grace period must be between 0 and 30 days.", field="grace")
    old = ApiKey.objects.select_for_update().get(pk=api_key.pk)
    now = timezone.now()
    if not old.is_active(now):
        raise ApplicationError("This key is already revoked; create a new one instead.", code="key_revoked")
    if old.replaced_by_id:
        raise ApplicationError("This key was already rotated.", code="key_already_rotated")
    new, raw = api_key_create(
        project=old.project,
        name=old.name,
        kind=old.kind,
        scopes=old.scopes if old.kind == ApiKey.Kind.RESTRICTED else None,
        ceiling=old.ceiling if old.kind == ApiKey.Kind.RESTRICTED else None,
        created_by=rotated_by,
    )
    new.rate_limit_per_minute = old.rate_limit_per_minute
    new.save(update_fields=["rate_limit_per_minute"])
    old.revoked_at = now + grace
    old.replaced_by = new
    old.save(update_fields=["revoked_at", "replaced_by"])
    return new, raw


def api_key_mark_used(*, api_key: ApiKey) -> bool:
    """Record use at most once a minute per key: the cache absorbs the rest."""
    if not cache.add(f"apikey-used:{api_key.project_id}:{api_key.pk}", 1, LAST_USED_RESOLUTION_SECONDS):
        return False
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=timezone.now())
    return True
