"""``Idempotency-Key`` on POSTs under /api/v1/.

A key is remembered per project and *namespace* with a fingerprint of the request. Same
key and same request: the stored answer is replayed. Same key, different request: 422.
Same key while the first is still running: 409. Only successful answers are stored, so a
request that was refused leaves nothing behind and may be retried under the same key.

Nothing is claimed or replayed until the URL is resolved and the owner resolver
(``TIDINGS_IDEMPOTENCY_OWNER_RESOLVER``) has said who is asking: it answers ``None`` for a
request the view will refuse (no key, a rejected key, a key without the scope), which
then reaches the view and is refused there, and otherwise the project and the namespace
its answers are kept in, so a replay never reaches a caller that could not have made the
request itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.module_loading import import_string

from apps.core.models import IdempotencyRecord
from apps.core.problems import problem_response

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
# A record left "in progress" this long belongs to a request that died mid-way.
STALE_AFTER = timedelta(minutes=5)
_REPLAYED_HEADERS = ("Content-Type", "Location")


def request_fingerprint(request: HttpRequest) -> str:
    digest = hashlib.sha256()
    digest.update(request.method.encode() + b" " + request.get_full_path().encode() + b"\n")
    if any(request.path.startswith(prefix) for prefix in settings.TIDINGS_UPLOAD_PATHS):
        # Uploads may be hundreds of MB and are streamed to storage: reading the body here
        # would load it whole. Their fingerprint is the declared type and size instead.
        digest.update(request.META.get("CONTENT_TYPE", "").encode() + b"\n")
        digest.update(str(request.META.get("CONTENT_LENGTH", "")).encode())
    else:
        digest.update(request.body)
    return digest.hexdigest()


def _replay(record: IdempotencyRecord) -> HttpResponse:
    response = HttpResponse(bytes(record.response_body or b""), status=record.response_status or 200)
    for name, value in (record.response_headers or {}).items():
        response[name] = value
    response["Idempotent-Replayed"] = "true"
    return response


# (project id, namespace) of a request whose answers may be stored and replayed.
Owner = tuple[int, str]
_RECORD_ATTR = "_tidings_idempotency_record"


class IdempotencyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._resolve_owner: Callable[[HttpRequest, Callable[..., HttpResponse]], Owner | None] | None = None

    def resolve_owner(self, request: HttpRequest, view: Callable[..., HttpResponse]) -> Owner | None:
        if self._resolve_owner is None:
            self._resolve_owner = import_string(settings.TIDINGS_IDEMPOTENCY_OWNER_RESOLVER)
        return self._resolve_owner(request, view)

    def process_view(
        self, request: HttpRequest, view: Callable[..., HttpResponse], args: Any, kwargs: Any
    ) -> HttpResponse | None:
        key = request.headers.get(HEADER)
        if request.method != "POST" or key is None or not request.path.startswith("/api/v1/"):
            return None
        if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
            return problem_response(
                400,
                "invalid_idempotency_key",
                f"{HEADER} must be 1 to {MAX_KEY_LENGTH} printable characters.",
            )
        owner = self.resolve_owner(request, view)
        if owner is None:
            # The view refuses it (401 or 403), and nothing is remembered.
            return None
        claimed = self._claim(*owner, key, request_fingerprint(request))
        if isinstance(claimed, HttpResponse):
            return claimed
        setattr(request, _RECORD_ATTR, claimed)
        return None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.get_response(request)
        except BaseException:
            record = getattr(request, _RECORD_ATTR, None)
            if record is not None:
                IdempotencyRecord.objects.filter(pk=record.pk, state=IdempotencyRecord.State.IN_PROGRESS).delete()
            raise
        record = getattr(request, _RECORD_ATTR, None)
        if record is None:
            return response
        if response.status_code >= 400 or getattr(response, "streaming", False):
            IdempotencyRecord.objects.filter(pk=record.pk).delete()
            return response
        headers = {name: response[name] for name in _REPLAYED_HEADERS if response.has_header(name)}
        IdempotencyRecord.objects.filter(pk=record.pk).update(
            state=IdempotencyRecord.State.COMPLETED,
            response_status=response.status_code,
            response_headers=headers,
            response_body=response.content,
        )
        return response

    def _claim(self, project_id: int, namespace: str, key: str, fingerprint: str) -> IdempotencyRecord | HttpResponse:
        now = timezone.now()
        expires = now + timedelta(hours=settings.TIDINGS_IDEMPOTENCY_TTL_HOURS)
        for _ in range(3):
            try:
                with transaction.atomic():
                    return IdempotencyRecord.objects.create(
                        project_id=project_id, namespace=namespace, key=key, fingerprint=fingerprint, expires_at=expires
                    )
            except IntegrityError:
                pass
            existing = IdempotencyRecord.objects.filter(project_id=project_id, namespace=namespace, key=key).first()
            if existing is None:
                continue  # deleted between our insert and read: try again
            stale = existing.state == IdempotencyRecord.State.IN_PROGRESS and existing.created_at < now - STALE_AFTER
            if existing.expires_at <= now or stale:
                IdempotencyRecord.objects.filter(pk=existing.pk, created_at=existing.created_at).delete()
                continue
            if existing.fingerprint != fingerprint:
                return problem_response(
                    422,
                    "idempotency_key_reused",
                    f"{HEADER} {key!r} was already used with a different request body or path.",
                )
            if existing.state == IdempotencyRecord.State.IN_PROGRESS:
                return problem_response(
                    409,
                    "idempotency_in_progress",
                    f"A request with {HEADER} {key!r} is still being processed; retry shortly.",
                    headers={"Retry-After": "1"},
                )
            return _replay(existing)
        return problem_response(409, "idempotency_in_progress", f"{HEADER} {key!r} is contended; retry shortly.")


def idempotency_records_sweep(*, now: timezone.datetime | None = None) -> int:
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
