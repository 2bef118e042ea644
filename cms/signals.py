"""Keeps llms.txt and llms-full.txt in step with what is published.

Wagtail's page_published/page_unpublished signals are the only place a publish from the
admin, a scheduled publish and a revert all pass through. The rebuild waits for the commit
so that it never caches a page another transaction may still roll back.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from wagtail.signals import page_published, page_unpublished


def _rebuild_after_commit(**kwargs: Any) -> None:
    from cms.llms import llms_regenerate

    transaction.on_commit(llms_regenerate)


def connect() -> None:
    page_published.connect(_rebuild_after_commit, dispatch_uid="cms-llms-published")
    page_unpublished.connect(_rebuild_after_commit, dispatch_uid="cms-llms-unpublished")
