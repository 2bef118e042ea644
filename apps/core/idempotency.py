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

import asyncio
import hashlib
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
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
        fingerprint = request_fingerprint(request)
        if not self._is_upload(request) and not asyncio.iscoroutinefunction(view):
            return self._run_with_record(request, view, args, kwargs, owner, key, fingerprint)
        claimed = self._claim(*owner, key, fingerprint)
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

    @staticmethod
    def _is_upload(request: HttpRequest) -> bool:
        return any(request.path.startswith(prefix) for prefix in settings.TIDINGS_UPLOAD_PATHS)

    def _run_with_record(
        self,
        request: HttpRequest,
        view: Callable[..., HttpResponse],
        args: Any,
        kwargs: Any,
        owner: Owner,
        key: str,
        fingerprint: str,
    ) -> HttpResponse:
        project_id, namespace = owner
        for _ in range(3):
            now = timezone.now()
            try:
                with transaction.atomic():
                    with connection.cursor() as cursor:
                        # How long a duplicate waits for the request it duplicates.
                        cursor.execute(
                            "SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)",
                            [f"{_wait_ms()}ms"],
                        )
                        (usual_lock_timeout, _) = cursor.fetchone()
                    try:
                        with transaction.atomic():
                            record = IdempotencyRecord.objects.create(
                                project_id=project_id,
                                namespace=namespace,
                                key=key,
                                fingerprint=fingerprint,
                                expires_at=now + timedelta(hours=settings.TIDINGS_IDEMPOTENCY_TTL_HOURS),
                            )
                    except IntegrityError:
                        record = None
                    if record is not None:
                        with connection.cursor() as cursor:
                            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [usual_lock_timeout])
                        response = view(request, *args, **kwargs)
                        render = getattr(response, "render", None)
                        if callable(render):
                            response = render()
                        if response.status_code >= 400 or getattr(response, "streaming", False):
                            raise _Refused(response)
                        headers = {name: response[name] for name in _REPLAYED_HEADERS if response.has_header(name)}
                        IdempotencyRecord.objects.filter(pk=record.pk).update(
                            state=IdempotencyRecord.State.COMPLETED,
                            response_status=response.status_code,
                            response_headers=headers,
                            response_body=response.content,
                        )
                        return response
            except _Refused as refused:
                # Nothing the refused request did is kept, its record included.
                return refused.response
            except OperationalError as error:
                if getattr(error.__cause__, "sqlstate", None) != _LOCK_NOT_AVAILABLE:
                    raise
                return _in_progress(key)
            answer = self._answer_existing(project_id, namespace, key, fingerprint, now)
            if answer is not None:
                return answer
        return problem_response(409, "idempotency_in_progress", f"{HEADER} {key!r} is contended; retry shortly.")

    def _answer_existing(
        self, project_id: int, namespace: str, key: str, fingerprint: str, now: timezone.datetime
    ) -> HttpResponse | None:
        """The answer for a key already recorded, or None once a dead record is cleared."""
        existing = IdempotencyRecord.objects.filter(project_id=project_id, namespace=namespace, key=key).first()
        if existing is None:
            return None  # deleted between our insert and read: try again
        stale = existing.state == IdempotencyRecord.State.IN_PROGRESS and existing.created_at < now - STALE_AFTER
        if existing.expires_at <= now or stale:
            IdempotencyRecord.objects.filter(pk=existing.pk, created_at=existing.created_at).delete()
            return None
        if existing.fingerprint != fingerprint:
            return problem_response(
                422,
                "idempotency_key_reused",
                f"{HEADER} {key!r} was already used with a different request body or path.",
            )
        if existing.state == IdempotencyRecord.State.IN_PROGRESS:
            return _in_progress(key)
        return _replay(existing)

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
            answer = self._answer_existing(project_id, namespace, key, fingerprint, now)
            if answer is not None:
                return answer
        return problem_response(409, "idempotency_in_progress", f"{HEADER} {key!r} is contended; retry shortly.")


_LOCK_NOT_AVAILABLE = "55P03"


class _Refused(Exception):
    """Carries a refusal out of the transaction, so that all it wrote is rolled back."""

    def __init__(self, response: HttpResponse) -> None:
        self.response = response


def _wait_ms() -> int:
    return int(getattr(settings, "TIDINGS_IDEMPOTENCY_WAIT_MS", 10_000))


def _in_progress(key: str) -> HttpResponse:
    return problem_response(
        409,
        "idempotency_in_progress",
        f"A request with {HEADER} {key!r} is still being processed; retry shortly.",
        headers={"Retry-After": "1"},
    )


def idempotency_records_sweep(*, now: timezone.datetime | None = None) -> int:
    deleted, _ = IdempotencyRecord.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted
