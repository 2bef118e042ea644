"""Keeps llms.txt and llms-full.txt in step with what is published.

Wagtail's page_published/page_unpublished signals are the only place a publish from the
admin, a scheduled publish and a revert all pass through. The rebuild waits for the commit
so that it never caches a page another transaction may still roll back.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from wagtail.signals import page_published, page_unpublished

_LATEST = "_cms_llms_rebuild"


def _rebuild_after_commit(**kwargs: Any) -> None:
    from cms.llms import llms_regenerate

    # Publishing a whole tree in one transaction (the demo seed, a bulk publish) rebuilds
    # once: every publish queues a callback, and only the one queued last rebuilds.
    connection = transaction.get_connection()
    token = object()
    setattr(connection, _LATEST, token)

    def rebuild() -> None:
        if getattr(connection, _LATEST, None) is token:
            llms_regenerate()

    transaction.on_commit(rebuild)


def connect() -> None:
    page_published.connect(_rebuild_after_commit, dispatch_uid="cms-llms-published")
    page_unpublished.connect(_rebuild_after_commit, dispatch_uid="cms-llms-unpublished")
