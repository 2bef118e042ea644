"""What hand-written SQL needs to know about the database it runs on.

Postgres is the production database and its SQL stays as written. ``make run`` runs on a
SQLite file; statements that use Postgres-only SQL (now(), arrays and ``= ANY``, unnest,
xmax, data-modifying CTEs, COPY, SKIP LOCKED, advisory locks) have a SQLite variant beside
them, chosen by ``is_sqlite()``. SQLite has a single writer and every local transaction is
IMMEDIATE, so row locks are unnecessary there: the transaction already owns the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import connection


def is_sqlite() -> bool:
    return connection.vendor == "sqlite"


def ts(value: datetime | None) -> str | None:
    """A datetime as Django stores it in SQLite (naive UTC text), so comparisons order right."""
    return connection.ops.adapt_datetimefield_value(value) if value is not None else None


def ids_json(ids: Iterable[Any]) -> str:
    """A list for ``IN (SELECT value FROM json_each(%s))``: one bound string."""
    return json.dumps(list(ids))


# The SQLite spelling of ``= ANY(%s)`` for a list bound with ``ids_json``.
IN_JSON = "IN (SELECT value FROM json_each(%s))"

_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
COPY_NULL = "\\N"


def copy_text(value: str) -> str:
    """One value in Postgres COPY text format.

    Hand-built COPY lines cost a fraction of psycopg's per-field ``write_row`` on hot
    paths (imports, the dispatcher's attempts and events).
    """
    return value.translate(_COPY_ESCAPES)
