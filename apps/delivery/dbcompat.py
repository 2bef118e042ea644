"""What the delivery SQL needs to know about the database it runs on.

Postgres is the production database and its SQL stays as written. ``make run`` runs on a
SQLite file; the few statements that use Postgres-only SQL (SKIP LOCKED, jsonb_to_recordset,
unnest, COPY, arrays) have a SQLite variant chosen by ``is_sqlite()``. SQLite has a single
writer, so a plain ``UPDATE ... RETURNING`` in an IMMEDIATE transaction is already an
atomic claim.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime

from django.db import connection


def is_sqlite() -> bool:
    return connection.vendor == "sqlite"


def ts(value: datetime | None) -> str | None:
    """A datetime as Django stores it in SQLite (naive UTC text), so comparisons order right."""
    return connection.ops.adapt_datetimefield_value(value) if value is not None else None


def ids_json(ids: Iterable[int]) -> str:
    """An id list for ``IN (SELECT value FROM json_each(%s))``: one bound string."""
    return json.dumps(list(ids))
