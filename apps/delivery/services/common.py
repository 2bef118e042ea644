"""Small helpers shared by the delivery services: event rows and origin notification."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db import connection, transaction

from apps.core.dbcompat import copy_text
from apps.core.registry import RegistryError
from apps.delivery.origins import FinalOutcome, origin_listeners

log = logging.getLogger(__name__)

EVENT_COLUMNS = ("project_id", "delivery_id", "channel", "state", "reason", "at")


def events_write(rows: Iterable[tuple[int, int, str, str, str, datetime]]) -> int:
    """Append events with COPY: (project_id, delivery_id, channel, state, reason, at)."""
    rows = list(rows)
    if not rows:
        return 0
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(f"COPY delivery_deliveryevent ({', '.join(EVENT_COLUMNS)}) FROM STDIN") as copy:
            copy.write(_event_lines(rows))
    return len(rows)


def _event_lines(rows: list[tuple[int, int, str, str, str, datetime]]) -> str:
    # A batch's events share one timestamp: format each distinct one once.
    stamps: dict[datetime, str] = {}
    lines = []
    for project_id, delivery_id, channel, state, reason, at in rows:
        stamp = stamps.get(at)
        if stamp is None:
            stamp = stamps[at] = at.isoformat()
        lines.append(
            f"{int(project_id)}\t{int(delivery_id)}\t{copy_text(channel)}\t{copy_text(state)}"
            f"\t{copy_text(reason or '')}\t{stamp}\n"
        )
    return "".join(lines)


def origins_notify(outcomes: Sequence[FinalOutcome]) -> None:
    """Hand final outcomes to the listener registered for each origin kind, in batches."""
    by_kind: dict[str, list[FinalOutcome]] = {}
    for outcome in outcomes:
        by_kind.setdefault(outcome.origin_kind, []).append(outcome)
    for kind, items in by_kind.items():
        try:
            listener = origin_listeners.get(kind)
        except RegistryError:
            continue  # origins that do not care about outcomes register nothing
        try:
            # A savepoint per origin: a failing listener must not undo the recorded sends,
            # or the batch would be retried (and its listener fail) forever.
            with transaction.atomic():
                listener(items)
        except Exception:  # logged; the ledger stays the source of truth
            log.exception("origin listener %r failed for %d outcomes", kind, len(items))
