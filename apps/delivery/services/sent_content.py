"""Retention of sent-message snapshots: old ones go, in batches."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

# The subquery walks the BRIN index on created_at (rows arrive in that order), so each
# batch reads only the oldest block ranges, however many recent snapshots there are.
PRUNE_BATCH = """
DELETE FROM delivery_sentcontent WHERE id IN (
    SELECT id FROM delivery_sentcontent WHERE created_at < %(before)s LIMIT %(limit)s
)
"""


def sent_content_prune(*, now: datetime | None = None, batch_size: int = 5000) -> int:
    """Delete snapshots older than ``TIDINGS_SENT_CONTENT_RETENTION_DAYS``; returns how many.

    One short transaction per batch rather than one for all: a backlog of millions would
    otherwise hold its locks and bloat the WAL in one piece while dispatch keeps inserting.
    """
    before = (now or timezone.now()) - timedelta(days=settings.TIDINGS_SENT_CONTENT_RETENTION_DAYS)
    removed = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(PRUNE_BATCH, {"before": before, "limit": batch_size})
            count = cursor.rowcount
        removed += count
        if count < batch_size:
            return removed
