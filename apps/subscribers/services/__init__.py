"""Subscriber writes. Import from here: ``from apps.subscribers.services import ...``."""

from apps.subscribers.services.devices import device_deactivate, device_delete, device_register
from apps.subscribers.services.imports import import_create, import_run
from apps.subscribers.services.segments import (
    segment_count_preview,
    segment_create,
    segment_delete,
    segment_recompute,
    segment_update,
    segments_refresh_for,
)
from apps.subscribers.services.subscribers import (
    preference_set,
    subscriber_erase,
    subscriber_identify,
    subscriber_update,
)
from apps.subscribers.services.tags import subscriber_tags_change, tags_change_bulk

__all__ = [
    "device_deactivate",
    "device_delete",
    "device_register",
    "import_create",
    "import_run",
    "preference_set",
    "segment_count_preview",
    "segment_create",
    "segment_delete",
    "segment_recompute",
    "segment_update",
    "segments_refresh_for",
    "subscriber_erase",
    "subscriber_identify",
    "subscriber_tags_change",
    "subscriber_update",
    "tags_change_bulk",
]
