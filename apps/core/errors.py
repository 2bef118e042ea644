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


def exception_reason(exc: BaseException, limit: int = 500) -> str:
    """What broke, as a row's reason in every batch engine: the exception's class and
    message on one line, without NUL (PostgreSQL text refuses it), at most ``limit``
    characters, a cut one ending in an ellipsis."""
    message = " ".join(str(exc).replace("\x00", "").split())
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
