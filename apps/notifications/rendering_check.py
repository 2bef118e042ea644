"""Refusing data that breaks a strict template before anything is stored.

Only the caller's ``data`` can be checked at publish time: subscriber fields differ per
recipient and are checked when each delivery renders (a strict delivery that lacks one
fails with the variable named). So subscribers are stood in for by a value that answers
every attribute, and any missing variable the render reports is one the data lacks.
"""

from __future__ import annotations

from typing import Any

from apps.core.errors import ApplicationError
from apps.delivery.rendering import TemplateError, render, render_context
from apps.notifications.template_refs import ResolvedTemplate


class _AnyValue(dict):
    """Answers every key and attribute with another ``_AnyValue``; renders as ""."""

    def __getitem__(self, key: Any) -> _AnyValue:
        return _AnyValue()

    def __getattr__(self, name: str) -> _AnyValue:
        if name.startswith("_"):
            raise AttributeError(name)
        return _AnyValue()

    def __contains__(self, key: object) -> bool:
        return True

    def __str__(self) -> str:
        return ""

    def __iter__(self) -> Any:
        return iter(())


def strict_check(resolved: ResolvedTemplate, *, channels: list[str], data: dict[str, Any]) -> None:
    context = render_context(None, data)
    context["subscriber"] = _AnyValue()
    for channel in channels:
        try:
            render(resolved.version, context, strict=True, channel=channel)
        except TemplateError as exc:
            if exc.code != "template_variable_missing":
                raise ApplicationError(exc.message, code=exc.code, field="template") from None
            raise ApplicationError(
                f"Template {resolved.key}@{resolved.number} ({channel}) needs the variable {exc.field!r}, "
                f"which data does not have.",
                code="template_variable_missing",
                field=f"data.{exc.field}",
                extra={"variable": exc.field},
            ) from None
