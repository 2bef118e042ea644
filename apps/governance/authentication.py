"""The one place an API key is read: ``Authorization: Bearer <key>``."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from apps.governance.keys import looks_like_key
from apps.governance.models import ApiKey
from apps.governance.selectors import api_key_by_raw
from apps.governance.services import api_key_mark_used

_CACHE_ATTR = "_tidings_api_key"
_MISSING = object()


class KeyRejected(exceptions.AuthenticationFailed):
    def __init__(self, detail: str, code: str) -> None:
        super().__init__(detail, code)
        self.problem_code = code


@dataclass(frozen=True)
class ApiPrincipal:
    """Stands in for ``request.user`` on API calls: the key, not a person, is acting."""

    api_key: ApiKey
    is_authenticated: bool = True
    is_anonymous: bool = False

    def __str__(self) -> str:
        return f"api-key:{self.api_key.pk}"


def _raw_key(request: HttpRequest) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise KeyRejected("Authorization must be 'Bearer <key>'.", "malformed_authorization")
    return value.strip()


def resolve_api_key(request: HttpRequest) -> ApiKey | None:
    """The active key presented with ``request``, or ``None`` when there is none.

    Raises ``KeyRejected`` for a key that is malformed, unknown, revoked or rotated out.
    The answer is cached on the request so the idempotency layer and DRF share one lookup.
    """
    cached = getattr(request, _CACHE_ATTR, _MISSING)
    if cached is not _MISSING:
        if isinstance(cached, KeyRejected):
            raise cached
        return cached  # type: ignore[return-value]
    try:
        key = _lookup(request)
    except KeyRejected as exc:
        setattr(request, _CACHE_ATTR, exc)
        raise
    setattr(request, _CACHE_ATTR, key)
    return key


def _lookup(request: HttpRequest) -> ApiKey | None:
    raw = _raw_key(request)
    if raw is None:
        return None
    if not looks_like_key(raw):
        raise KeyRejected("The API key is malformed: expected pk_, sk_ or rk_ and 43 characters.", "malformed_key")
    key = api_key_by_raw(raw)
    if key is None:
        raise KeyRejected("The API key is not recognised.", "invalid_key")
    if not key.is_active(timezone.now()):
        if key.replaced_by_id:
            raise KeyRejected("The API key was rotated and its grace period is over.", "rotated_key")
        raise KeyRejected("The API key was revoked.", "revoked_key")
    return key


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[ApiPrincipal, ApiKey] | None:
        key = resolve_api_key(request._request)
        if key is None:
            return None
        api_key_mark_used(api_key=key)
        return ApiPrincipal(api_key=key), key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'
