"""Shared bits of the subscribers API: the secret-key gate, cursor pagination, error docs."""

from __future__ import annotations

import base64
from typing import Any

from django.db.models import QuerySet
from rest_framework import exceptions
from rest_framework.request import Request

from apps.core.api_schema import problem_responses
from apps.governance.api.base import ProjectAPIView


class SubscribersAPIView(ProjectAPIView):
    """``secret_methods`` are refused for keys under the public ceiling, even when a
    restricted key carries the scope: erasing people or importing files is server work."""

    secret_methods: frozenset[str] = frozenset()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        key = self.api_key
        if request.method in self.secret_methods and "secret" not in (key.kind, key.ceiling):
            raise exceptions.PermissionDenied("This operation needs a secret key.", "secret_key_required")


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"id:{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int | None:
    if not cursor:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, _, value = raw.partition(":")
        if kind != "id":
            raise ValueError(kind)
        return int(value)
    except ValueError:
        raise exceptions.ValidationError({"cursor": "This cursor is not one this API gave out."}) from None


def page(qs: QuerySet[Any], limit: int, key: str = "pk") -> tuple[list[Any], str | None]:
    """One keyset page: ``limit`` rows and the cursor of the next page (or None)."""
    rows = list(qs[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    last = rows[-1] if rows else None
    last_id = (last if isinstance(last, int) else getattr(last, key)) if last is not None else None
    return rows, encode_cursor(last_id) if more and last_id is not None else None


problems = problem_responses
