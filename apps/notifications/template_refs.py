"""Resolving ``"key"`` / ``"key@version"`` to a published TemplateVersion, cached.

The publish path runs this on every request, so it must not cost a query each time.
A numbered version is immutable once published, so it is cached for the life of the
process. ``"key"`` (the latest published version) is cached briefly: a version published
in the console reaches the API within ``TIDINGS_TEMPLATE_CACHE_SECONDS``.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.core.errors import ApplicationError
from apps.delivery.models import Template, TemplateVersion

REF = re.compile(r"^(?P<key>[-a-zA-Z0-9_]{1,100})(?:@(?P<number>[1-9]\d{0,8}))?$")
_MAX_ENTRIES = 4096


@dataclass(frozen=True)
class ResolvedTemplate:
    key: str
    version_id: int
    number: int
    channels: frozenset[str]
    strict: bool
    # The published row itself (immutable), so strict checks render without a query.
    version: Any


_cache: dict[tuple[int, str, int | None], tuple[float, ResolvedTemplate]] = {}
_lock = threading.Lock()


def template_cache_clear() -> None:
    with _lock:
        _cache.clear()


def parse_ref(ref: str) -> tuple[str, int | None]:
    match = REF.match(ref.strip())
    if not match:
        raise ApplicationError(
            f'{ref!r} is not a template reference; use "key" or "key@version" (e.g. welcome@3).',
            code="invalid_template_ref",
            field="template",
        )
    number = match.group("number")
    return match.group("key"), int(number) if number else None


def _load(project_id: int, key: str, number: int | None) -> ResolvedTemplate:
    template = Template.objects.for_project(project_id).filter(key=key).only("id").first()
    if template is None:
        raise ApplicationError(
            f"There is no template {key!r} in this project.", code="unknown_template", field="template"
        )
    versions = TemplateVersion.objects.filter(template_id=template.pk, published_at__isnull=False).select_related(
        "layout"
    )
    version = versions.filter(number=number).first() if number is not None else versions.order_by("-number").first()
    if version is None:
        if number is None:
            message = f"Template {key!r} has no published version yet."
        else:
            message = f"Template {key!r} has no published version {number}."
        raise ApplicationError(message, code="unknown_template_version", field="template")
    return ResolvedTemplate(
        key=key,
        version_id=version.pk,
        number=version.number,
        channels=frozenset(version.content or {}),
        strict=version.strict,
        version=version,
    )


def template_resolve(project_id: int, ref: str) -> ResolvedTemplate:
    key, number = parse_ref(ref)
    cache_key = (project_id, key, number)
    now = time.monotonic()
    hit = _cache.get(cache_key)
    if hit is not None and (number is not None or hit[0] > now):
        return hit[1]
    resolved = _load(project_id, key, number)
    ttl = float(getattr(settings, "TIDINGS_TEMPLATE_CACHE_SECONDS", 5))
    with _lock:
        if len(_cache) >= _MAX_ENTRIES:
            _cache.clear()
        _cache[cache_key] = (now + ttl, resolved)
    return resolved
