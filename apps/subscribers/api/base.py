"""Shared bits of the subscribers API: the secret-key gate, cursor pagination, error docs."""

from __future__ import annotations

import base64
from typing import Any

from django.db.models import QuerySet
from rest_framework import exceptions
from rest_framework.request import Request

from apps.core.api_schema import problem_responses
from apps.core.errors import PermissionDenied
from apps.governance.api.base import ProjectAPIView
from apps.governance.identity import subscriber_hash_matches
from apps.governance.models import ApiKey
from apps.governance.scopes import READ


class SubscribersAPIView(ProjectAPIView):
    # ``secret_methods`` are refused for keys under the public ceiling, even when a
    # restricted key carries the scope: erasing people or importing files is server work.
    # (A comment: an inherited docstring would become every operation's description.)

    secret_methods: frozenset[str] = frozenset()

    @classmethod
    def key_may_call(cls, key: ApiKey, method: str) -> bool:
        return super().key_may_call(key, method) and (method not in cls.secret_methods or not key.under_public_ceiling)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if request.method in self.secret_methods and self.api_key.under_public_ceiling:
            raise exceptions.PermissionDenied("This operation needs a secret key.", "secret_key_required")

    @property
    def reads_people(self) -> bool:
        """Whether answers may carry personal data: only for keys holding ``read``."""
        return READ in self.api_key.effective_scopes()

    def identity_verified(self, external_id: str | None, subscriber_hash: str | None) -> bool:
        """Whether this request may change the identified subscriber ``external_id``.

        Keys under the secret ceiling act for anyone. A public key proves it acts for one
        person with their subscriber hash; a wrong hash is refused at once.
        """
        if not self.api_key.under_public_ceiling:
            return True
        if not subscriber_hash or not external_id:
            return False
        if not subscriber_hash_matches(project=self.project, external_id=external_id, given=subscriber_hash):
            raise PermissionDenied(
                "subscriber_hash is not the HMAC-SHA256 of this external_id with the project's "
                "identity-verification secret.",
                code="identity_verification_required",
                field="subscriber_hash",
            )
        return True


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
