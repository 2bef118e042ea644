"""Scope checks, before any view code runs. Each view declares the scope it needs."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.governance.models import ApiKey


class MissingScope(exceptions.PermissionDenied):
    def __init__(self, scope: str, key: ApiKey) -> None:
        super().__init__(f"This {key.kind} key lacks the scope {scope!r}.", "missing_scope")
        self.problem_code = "missing_scope"
        self.problem_extra = {"missing_scope": scope, "key_type": key.kind}


def required_scope(view: Any, method: str) -> str | None:
    per_method = getattr(view, "required_scopes", None)
    if per_method:
        return per_method.get(method, per_method.get("*"))
    return getattr(view, "required_scope", None)


class HasScope(BasePermission):
    """Fail closed: a view that declares no scope is refused for every key."""

    def has_permission(self, request: Request, view: Any) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey):
            raise exceptions.NotAuthenticated(
                "Send an API key as 'Authorization: Bearer <key>'.", "missing_credentials"
            )
        scope = required_scope(view, request.method or "GET")
        if scope is None:
            raise exceptions.PermissionDenied("This endpoint declares no scope.", "scope_not_declared")
        if scope == "*":
            return True
        if scope not in key.effective_scopes():
            raise MissingScope(scope, key)
        return True
