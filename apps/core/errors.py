"""Errors that services raise: a stable machine code and a human sentence."""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A refusal the caller can act on. ``code`` is stable; ``message`` is for people."""

    status = 422
    default_code = "invalid"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        field: str | None = None,
        status: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field = field
        if status is not None:
            self.status = status
        self.extra = extra or {}


class NotFound(ApplicationError):
    status = 404
    default_code = "not_found"


class Conflict(ApplicationError):
    status = 409
    default_code = "conflict"


class PermissionDenied(ApplicationError):
    status = 403
    default_code = "forbidden"
